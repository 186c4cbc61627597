//! The `skill` tool: reads a skill's instructions, or one of its files, on demand.

use crate::{SKILL_FILE, SkillSet};
use qilin_protocol::{CallPresentation, ContentBlock, Detail};
use qilin_tool::{Tool, ToolContext, ToolError, ToolResult};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// Read a skill of the catalog: its instructions and the list of its other files, or one of
/// those files.
#[derive(qilin_tool::Tool)]
#[tool(name = "skill", read_only)]
pub struct SkillTool {
    skills: Arc<SkillSet>,
}

impl SkillTool {
    /// A `skill` tool that reads from `skills`.
    pub fn new(skills: Arc<SkillSet>) -> Self {
        SkillTool { skills }
    }

    /// The skills it reads from.
    pub fn skills(&self) -> &SkillSet {
        &self.skills
    }
}

/// Which skill to read, and optionally which of its files.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SkillArgs {
    /// The skill's name in the catalog.
    pub name: String,
    /// One of its files, relative to its folder (`reference/x.md`; `references/` works
    /// too); omit it for the instructions.
    #[serde(default)]
    pub file: Option<String>,
}

/// What reading a skill returns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct SkillOutput {
    /// The skill's name.
    pub name: String,
    /// The file that was read, relative to the skill folder (`SKILL.md` for the instructions).
    pub file: String,
    /// The text read: the instructions without front matter, or the file's content.
    pub content: String,
    /// The skill's other files, relative to its folder; listed when the instructions were
    /// read, empty when a single file was.
    pub files: Vec<String>,
}

impl Tool for SkillTool {
    type Args = SkillArgs;
    type Output = SkillOutput;

    fn prompt_hint(&self) -> &str {
        "Before a task a skill covers, call skill with its name and follow it; read a file it \
         mentions only when the task needs it. A skill is the complete guide to the tools it \
         teaches, and the only one for tools reached from run_code."
    }

    fn present(&self, args: &SkillArgs) -> CallPresentation {
        let remark = match &args.file {
            Some(file) => format!("{} / {file}", args.name),
            None => args.name.clone(),
        };
        CallPresentation::new("Read skill", remark)
    }

    fn before_detail(&self, _args: &SkillArgs) -> Option<Detail> {
        None
    }

    fn detail(&self, _args: &SkillArgs, result: &ToolResult<SkillOutput>) -> Option<Detail> {
        result.as_ref().ok().map(|output| Detail::Markdown {
            markdown: output.content.clone(),
        })
    }

    async fn call(&self, args: SkillArgs, _cx: &ToolContext) -> ToolResult<SkillOutput> {
        let Some(skill) = self.skills.get(&args.name) else {
            return Err(unknown_skill(&self.skills, &args.name));
        };
        match args.file {
            None => Ok(SkillOutput {
                name: skill.name.clone(),
                file: SKILL_FILE.to_string(),
                content: skill.body.clone(),
                files: skill.files.clone(),
            }),
            Some(file) => {
                let content = skill
                    .read_file(&file)
                    .map_err(|err| ToolError::invalid_arguments(err.to_string()))?;
                Ok(SkillOutput {
                    name: skill.name.clone(),
                    file,
                    content,
                    files: Vec::new(),
                })
            }
        }
    }

    fn content(&self, output: &SkillOutput) -> Vec<ContentBlock> {
        let mut text = output.content.trim_end().to_string();
        if !output.files.is_empty() {
            text.push_str(&format!(
                "\n\n---\nFiles in skill `{}` (read one by giving its path as `file`):\n",
                output.name
            ));
            for file in &output.files {
                text.push_str(&format!("- {file}\n"));
            }
        }
        vec![ContentBlock::text(text)]
    }
}

fn unknown_skill(skills: &SkillSet, name: &str) -> ToolError {
    let suggestions = skills.suggest(name);
    let all: Vec<&str> = skills.names().collect();
    let mut message = format!("no skill is named `{name}`");
    if !suggestions.is_empty() {
        message.push_str(&format!("; did you mean `{}`?", suggestions.join("` or `")));
    }
    if all.is_empty() {
        message.push_str(" No skills are available.");
    } else {
        message.push_str(&format!(" The available skills are: {}.", all.join(", ")));
    }
    ToolError::invalid_arguments(message)
}
