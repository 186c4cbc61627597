//! Prompt assembly: from an agent, its skills and the registry to exactly what a provider
//! receives, in a fixed order and byte-identical for the same inputs so that a provider's
//! prompt cache keeps working across turns, steps and runs.

use crate::{AgentFile, AvailableSkills, Skill, SkillSet};
use qilin_protocol::ProjectContext;
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
    /// The directly mounted tools in the agent's order, then `skill` (unless the agent is
    /// code-only: it reads skills from code), then `run_code` when code mode is on.
    pub tools: Vec<DirectDefinition>,
    /// What the catalog holds and what its budget left out, for telling the user; not part
    /// of what the provider receives.
    #[serde(skip)]
    pub catalog: CatalogSummary,
}

/// What the catalog of available skills holds once fitted to its budget.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct CatalogSummary {
    /// The skills listed, in name order.
    pub listed: Vec<String>,
    /// The listed skills whose description was shortened to fit, in name order.
    pub shortened: Vec<String>,
    /// The available skills left out to keep within the budget, highest priority first.
    pub left_out: Vec<String>,
    /// The budget, in estimated tokens (bytes / 4).
    pub budget_tokens: usize,
}

impl CatalogSummary {
    /// What a user should know about the catalog, when its budget shortened or left out
    /// anything: how many skills it lists, which it left out, and how to change that. `None`
    /// when every skill is listed whole.
    pub fn note(&self) -> Option<String> {
        let shortened = self.shortened.len();
        if !self.left_out.is_empty() {
            let total = self.listed.len() + self.left_out.len();
            Some(format!(
                "the catalog of available skills lists {} of {total}{} to keep within its \
                 budget of {} tokens; left out: {}. Raise `skills.catalog_tokens` in the agent \
                 file, or name the skills it needs under `skills.available`",
                self.listed.len(),
                if shortened > 0 {
                    format!(" ({shortened} with a shortened description)")
                } else {
                    String::new()
                },
                self.budget_tokens,
                self.left_out.join(", ")
            ))
        } else if shortened > 0 {
            Some(format!(
                "the catalog of available skills shortened {shortened} description{} to keep \
                 within its budget of {} tokens; raise `skills.catalog_tokens` in the agent \
                 file to list them whole",
                if shortened == 1 { "" } else { "s" },
                self.budget_tokens
            ))
        } else {
            None
        }
    }
}

/// The most characters a catalog description keeps once descriptions are shortened to fit
/// the budget.
pub const SHORT_DESCRIPTION_CHARS: usize = 160;

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
    agent: &AgentFile,
    skills: &SkillSet,
    registry: &ToolRegistry,
) -> Result<AssembledPrompt, PromptError> {
    assemble_prompt_in(agent, skills, registry, None)
}

/// Assembles the prompt of a session with its project `context`: after the catalog, the
/// project's memory files, then the environment block (last, as the part that changes most
/// often: every day, with the date). Still a pure function of its inputs: a session records
/// its context when it begins and passes the same one whenever it assembles its prompt again
/// (on resume), so the bytes never change within a session.
pub fn assemble_prompt_in(
    agent: &AgentFile,
    skills: &SkillSet,
    registry: &ToolRegistry,
    context: Option<&ProjectContext>,
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
    let mut summary = CatalogSummary {
        budget_tokens: agent.catalog_tokens,
        ..CatalogSummary::default()
    };
    if !available.is_empty() {
        let preloaded: Vec<&str> = agent
            .preload
            .iter()
            .map(|file| file.skill.as_str())
            .collect();
        let (text, fitted) = catalog(
            &available,
            &preloaded,
            agent.catalog_tokens,
            SkillReading::of(agent),
        );
        sections.push(text);
        summary = fitted;
    }
    if let Some(context) = context {
        sections.extend(context_sections(context));
    }
    let mut system = sections.join("\n\n");
    system.push('\n');
    Ok(AssembledPrompt {
        catalog: summary,
        system,
        tools: tools_list(
            agent,
            registry,
            !available.is_empty() || !agent.preload.is_empty(),
        )?,
    })
}

/// The project memory and environment sections of a session's system prompt.
fn context_sections(context: &ProjectContext) -> Vec<String> {
    let mut sections = Vec::new();
    if !context.memory.is_empty() {
        let mut memory = String::from(
            "<project-memory>\nThe project's own instructions for agents, from its memory files \
             (the repository root's first, the workspace's last; a later file wins where they \
             disagree). Follow them unless the user says otherwise.\n",
        );
        for file in &context.memory {
            memory.push_str(&format!(
                "<memory-file path=\"{}\">\n{}\n</memory-file>\n",
                markup_escaped(&file.path),
                file.text.trim_end()
            ));
        }
        memory.push_str("</project-memory>");
        sections.push(memory);
    }
    let env = &context.environment;
    let mut environment = String::from("<environment>\n");
    environment.push_str(&format!("Workspace: {}\n", env.workspace));
    environment.push_str(&format!("OS: {}\n", env.os));
    if let Some(shell) = &env.shell {
        environment.push_str(&format!("Shell: {shell}\n"));
    }
    environment.push_str(&format!("Date: {}\n", env.date));
    if let Some(branch) = &env.git_branch {
        environment.push_str(&format!("Git branch: {branch}\n"));
    }
    environment.push_str("</environment>");
    sections.push(environment);
    sections
}

/// The skills the agent may read with the `skill` tool: its available skills and those it
/// preloads.
pub fn agent_skill_set(agent: &AgentFile, skills: &SkillSet) -> Result<SkillSet, PromptError> {
    let available = available_skills(agent, skills)?;
    let names = available
        .iter()
        .map(|skill| skill.name.as_str())
        .chain(agent.preload.iter().map(|file| file.skill.as_str()));
    Ok(skills.only(names))
}

/// The skills an agent may read, in the catalog's priority order: those named under
/// `skills.available` in the order written, or every skill in name order.
fn available_skills<'a>(
    agent: &AgentFile,
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
            Ok(found)
        }
    }
}

/// Estimated tokens of a text: bytes / 4, rounded up.
pub fn estimate_tokens(text: &str) -> usize {
    text.len().div_ceil(4)
}

/// The catalog, fitted to `budget_tokens` by one rule:
///
/// 1. every available skill with its whole description, when that fits;
/// 2. else every skill with its description shortened to [`SHORT_DESCRIPTION_CHARS`]
///    characters (cut at a word, ending with `…`), when that fits;
/// 3. else the shortened lines in priority order — the skills named under
///    `skills.available` in the order written (all skills in name order with `available:
///    all`), preloaded skills last since their files are already in the prompt — each
///    listed while it fits (one that does not fit does not stop shorter ones after it), and
///    a closing note says how many were left out and how to reach them.
///
/// Listed lines are in name order. `skills` comes in priority order.
fn catalog(
    skills: &[&Skill],
    preloaded: &[&str],
    budget_tokens: usize,
    reading: SkillReading,
) -> (String, CatalogSummary) {
    let mut text = String::from("<available-skills>\n");
    text.push_str(match reading {
        SkillReading::Tool => "Before a task a skill covers, read it with the `skill` tool.\n",
        SkillReading::Code => {
            "Before a task a skill covers, read it in run_code: `print(sdk.skill(\"NAME\"))`.\n"
        }
    });
    let closing = "</available-skills>";
    let fixed = estimate_tokens(&text) + estimate_tokens(closing);
    let ordered: Vec<&Skill> = skills
        .iter()
        .filter(|skill| !preloaded.contains(&skill.name.as_str()))
        .chain(
            skills
                .iter()
                .filter(|skill| preloaded.contains(&skill.name.as_str())),
        )
        .copied()
        .collect();
    let cost = |lines: &[CatalogLine]| {
        lines
            .iter()
            .map(|l| estimate_tokens(&l.text))
            .sum::<usize>()
    };
    let whole: Vec<CatalogLine> = ordered.iter().map(|s| catalog_line(s, None)).collect();
    let mut chosen = if fixed + cost(&whole) <= budget_tokens {
        whole
    } else {
        let short: Vec<CatalogLine> = ordered
            .iter()
            .map(|s| catalog_line(s, Some(SHORT_DESCRIPTION_CHARS)))
            .collect();
        let shortened_note = estimate_tokens(SHORTENED_NOTE);
        if fixed + shortened_note + cost(&short) <= budget_tokens {
            short
        } else {
            let mut used =
                fixed + estimate_tokens(&left_out_note(ordered.len(), budget_tokens, reading));
            let mut noted = false;
            short
                .into_iter()
                .filter(|line| {
                    let note = if line.shortened && !noted {
                        shortened_note
                    } else {
                        0
                    };
                    let line_cost = estimate_tokens(&line.text) + note;
                    let fits = used + line_cost <= budget_tokens;
                    if fits {
                        used += line_cost;
                        noted |= note > 0;
                    }
                    fits
                })
                .collect()
        }
    };
    let left_out: Vec<String> = ordered
        .iter()
        .filter(|skill| !chosen.iter().any(|line| line.name == skill.name))
        .map(|skill| skill.name.clone())
        .collect();
    chosen.sort_by(|a, b| a.name.cmp(&b.name));
    for line in &chosen {
        text.push_str(&line.text);
    }
    let shortened: Vec<String> = chosen
        .iter()
        .filter(|line| line.shortened)
        .map(|line| line.name.clone())
        .collect();
    if !shortened.is_empty() {
        text.push_str(SHORTENED_NOTE);
    }
    if !left_out.is_empty() {
        text.push_str(&left_out_note(left_out.len(), budget_tokens, reading));
    }
    text.push_str(closing);
    let summary = CatalogSummary {
        listed: chosen.into_iter().map(|line| line.name).collect(),
        shortened,
        left_out,
        budget_tokens,
    };
    (text, summary)
}

/// Said in the catalog when a description was shortened.
const SHORTENED_NOTE: &str = "Descriptions ending in … were shortened to fit; read a skill for \
                              all it covers.\n";

fn left_out_note(left_out: usize, budget_tokens: usize, reading: SkillReading) -> String {
    format!(
        "{left_out} more skill{} not listed here, to keep this catalog within {budget_tokens} \
         tokens. To find one, read the name you expect ({}): when no skill has that name, the \
         answer names every available skill.\n",
        if left_out == 1 { " is" } else { "s are" },
        match reading {
            SkillReading::Tool => "with the `skill` tool",
            SkillReading::Code => "with `sdk.skill` in run_code",
        },
    )
}

/// How an agent reads its skills: with the `skill` tool in its tools list, or from code
/// (`sdk.skill("NAME")` in `run_code`) when every one of its tools is reached from code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SkillReading {
    Tool,
    Code,
}

impl SkillReading {
    fn of(agent: &AgentFile) -> Self {
        if agent.code_only() {
            SkillReading::Code
        } else {
            SkillReading::Tool
        }
    }
}

/// One line of the catalog.
struct CatalogLine {
    name: String,
    text: String,
    shortened: bool,
}

/// `- name: description`, the description on one line and, with `limit`, cut to at most
/// that many characters at a word boundary, ending with `…`.
fn catalog_line(skill: &Skill, limit: Option<usize>) -> CatalogLine {
    let description = skill
        .description
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let (description, shortened) = match limit {
        Some(limit) if description.chars().count() > limit => (shorten(&description, limit), true),
        _ => (description, false),
    };
    CatalogLine {
        name: skill.name.clone(),
        text: format!("- {}: {}\n", skill.name, markup_escaped(&description)),
        shortened,
    }
}

/// `text` cut to at most `limit` characters, `…` included, at the last space before the cut
/// when there is one.
fn shorten(text: &str, limit: usize) -> String {
    let keep: String = text.chars().take(limit.saturating_sub(1)).collect();
    let cut = match keep.rfind(' ') {
        Some(space) if space > 0 => &keep[..space],
        _ => keep.as_str(),
    };
    format!("{}…", cut.trim_end_matches([',', ';', ':', ' ']))
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
    agent: &AgentFile,
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
        match SkillReading::of(agent) {
            SkillReading::Tool => required.push((SKILL_TOOL, "it has skills to read")),
            // Read from code: registered, never listed.
            SkillReading::Code if registry.get(SKILL_TOOL).is_none() => {
                return Err(PromptError::Missing {
                    agent: agent.name.clone(),
                    name: SKILL_TOOL.to_string(),
                    why: "it has skills to read",
                });
            }
            SkillReading::Code => {}
        }
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
            .and_then(|tool| match agent.code_only() {
                true => tool.code_only_definition(),
                false => tool.direct_definition(),
            })
            .ok_or_else(missing)?;
        if !tools.iter().any(|t| t.name == definition.name) {
            tools.push(definition);
        }
    }
    Ok(tools)
}
