//! Prompt assembly: from an agent, its skills and the registry to exactly what a provider
//! receives, in a fixed order and byte-identical for the same inputs so that a provider's
//! prompt cache keeps working across turns, steps and runs.

use crate::{Agent, AvailableSkills, Skill, SkillSet};
use qilin_tool::{DirectDefinition, ToolRegistry};
use serde::Serialize;

/// The wire name of the tool that reads skills.
pub const SKILL_TOOL: &str = "skill";
/// The wire name of the code-mode tool.
pub const RUN_CODE_TOOL: &str = "run_code";

/// What a provider receives for an agent: the system prompt and the tools list.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AssembledPrompt {
    /// Instructions, then the preloaded skill files, then the catalog of available skills.
    pub system: String,
    /// The directly mounted tools in the agent's order, then `skill`, then `run_code` when
    /// code mode is on.
    pub tools: Vec<DirectDefinition>,
}

/// Why a prompt could not be assembled for the registry and skills given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PromptError {
    /// A mounted tool is not in the registry.
    #[error("agent `{agent}` mounts `{name}`, which is not registered{}", did_you_mean(.suggestions))]
    UnknownTool {
        /// The agent.
        agent: String,
        /// The tool's wire name.
        name: String,
        /// Close registered names.
        suggestions: Vec<String>,
    },
    /// A mounted tool is code-mode-only.
    #[error(
        "agent `{agent}` mounts `{name}`, which is code-mode-only and never in a tools list; it is reached through `run_code`"
    )]
    CodeModeOnly {
        /// The agent.
        agent: String,
        /// The tool's wire name.
        name: String,
    },
    /// A tool the agent needs (`skill`, `run_code`) is not registered.
    #[error(
        "agent `{agent}` needs the `{name}` tool ({why}), but it is not available in this build"
    )]
    Missing {
        /// The agent.
        agent: String,
        /// The tool's wire name.
        name: String,
        /// Why the agent needs it.
        why: &'static str,
    },
    /// A skill the agent names is not in the skill set.
    #[error("agent `{agent}` names skill `{name}`, which was not found{}", did_you_mean(.suggestions))]
    UnknownSkill {
        /// The agent.
        agent: String,
        /// The skill's name.
        name: String,
        /// Close skill names.
        suggestions: Vec<String>,
    },
}

fn did_you_mean(suggestions: &[String]) -> String {
    if suggestions.is_empty() {
        String::new()
    } else {
        format!("; did you mean `{}`?", suggestions.join("` or `"))
    }
}

/// Assembles the prompt. A pure function of its inputs: no clock, no absolute paths, no
/// unordered iteration, so equal inputs give byte-identical output.
pub fn assemble_prompt(
    agent: &Agent,
    skills: &SkillSet,
    registry: &ToolRegistry,
) -> Result<AssembledPrompt, PromptError> {
    let available = available_skills(agent, skills)?;
    let mut sections = Vec::new();
    if !agent.instructions.is_empty() {
        sections.push(agent.instructions.clone());
    }
    for file in &agent.preload {
        sections.push(format!(
            "<skill-file skill=\"{}\" path=\"{}\">\n{}\n</skill-file>",
            markup_escaped(&file.skill),
            markup_escaped(&file.path),
            file.content.trim_end()
        ));
    }
    if !available.is_empty() {
        sections.push(catalog(&available, agent.catalog_tokens));
    }
    let mut system = sections.join("\n\n");
    system.push('\n');
    Ok(AssembledPrompt {
        system,
        tools: tools_list(
            agent,
            registry,
            !available.is_empty() || !agent.preload.is_empty(),
        )?,
    })
}

fn available_skills<'a>(
    agent: &Agent,
    skills: &'a SkillSet,
) -> Result<Vec<&'a Skill>, PromptError> {
    match &agent.available_skills {
        AvailableSkills::All => Ok(skills.iter().collect()),
        AvailableSkills::Named(names) => {
            let mut found = Vec::with_capacity(names.len());
            for name in names {
                let skill = skills.get(name).ok_or_else(|| PromptError::UnknownSkill {
                    agent: agent.name.clone(),
                    name: name.clone(),
                    suggestions: skills.suggest(name),
                })?;
                if !found.iter().any(|s: &&Skill| s.name == skill.name) {
                    found.push(skill);
                }
            }
            found.sort_by(|a, b| a.name.cmp(&b.name));
            Ok(found)
        }
    }
}

/// Estimated tokens of a text: bytes / 4, rounded up.
pub fn estimate_tokens(text: &str) -> usize {
    text.len().div_ceil(4)
}

/// The catalog: one line per skill, sorted by name, as many as fit the budget, then a note
/// saying how many were left out and how to reach them.
fn catalog(skills: &[&Skill], budget_tokens: usize) -> String {
    let mut text = String::from(
        "<available-skills>\nSkills teach capabilities on demand. Before a task one of them \
         covers, read it with the `skill` tool ({\"name\": \"<skill>\"}); it also lists the \
         skill's other files.\n",
    );
    let closing = "</available-skills>";
    let mut used = estimate_tokens(&text) + estimate_tokens(closing);
    let mut listed = 0;
    for skill in skills {
        let description = skill.description.split_whitespace().collect::<Vec<_>>();
        let line = format!(
            "- {}: {}\n",
            skill.name,
            markup_escaped(&description.join(" "))
        );
        let cost = estimate_tokens(&line);
        if used + cost > budget_tokens {
            break;
        }
        used += cost;
        text.push_str(&line);
        listed += 1;
    }
    let left_out = skills.len() - listed;
    if left_out > 0 {
        text.push_str(&format!(
            "{left_out} more skill{} not listed here, to keep this catalog within \
             {budget_tokens} tokens. To find one, call the `skill` tool with the name you \
             expect: when no skill has that name, the reply names every available skill.\n",
            if left_out == 1 { " is" } else { "s are" },
        ));
    }
    text.push_str(closing);
    text
}

/// `text` with `&`, `<`, `>` and `"` as character references, so that text from a skill or an
/// agent file (a description, a path) cannot close or open the prompt's markup.
fn markup_escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
    out
}

fn tools_list(
    agent: &Agent,
    registry: &ToolRegistry,
    reads_skills: bool,
) -> Result<Vec<DirectDefinition>, PromptError> {
    let mut tools: Vec<DirectDefinition> = Vec::new();
    for name in &agent.tools {
        let tool = registry.get(name).ok_or_else(|| PromptError::UnknownTool {
            agent: agent.name.clone(),
            name: name.clone(),
            suggestions: registry.suggest(name),
        })?;
        let definition = tool
            .direct_definition()
            .ok_or_else(|| PromptError::CodeModeOnly {
                agent: agent.name.clone(),
                name: name.clone(),
            })?;
        if !tools.iter().any(|t| t.name == definition.name) {
            tools.push(definition);
        }
    }
    let mut required = Vec::new();
    if reads_skills {
        required.push((SKILL_TOOL, "it has skills to read"));
    }
    if agent.code_mode {
        required.push((RUN_CODE_TOOL, "`code_mode` is on"));
    }
    for (name, why) in required {
        let missing = || PromptError::Missing {
            agent: agent.name.clone(),
            name: name.to_string(),
            why,
        };
        let definition = registry
            .get(name)
            .and_then(|tool| tool.direct_definition())
            .ok_or_else(missing)?;
        if !tools.iter().any(|t| t.name == definition.name) {
            tools.push(definition);
        }
    }
    Ok(tools)
}
