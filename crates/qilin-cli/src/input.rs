//! The conversation's input line: a line editor (arrows, word motions, history kept across
//! sessions, a pasted text kept as one message, several lines with Shift+Enter, Alt+Enter or a
//! line ending in `\`), and the slash commands typed at it.

use reedline::{
    EditCommand, Emacs, FileBackedHistory, KeyCode, KeyModifiers, Prompt, PromptEditMode,
    PromptHistorySearch, Reedline, ReedlineEvent, Signal, ValidationResult, Validator,
    default_emacs_keybindings,
};
use std::borrow::Cow;
use std::path::PathBuf;

/// How many entries the history keeps.
const HISTORY_SIZE: usize = 1000;

/// What the person typed at the prompt.
#[derive(Debug, PartialEq, Eq)]
pub enum Typed {
    /// A message for the agent, or a slash command.
    Line(String),
    /// Ctrl-C: the line was cleared.
    Interrupt,
    /// Ctrl-D on an empty line, or the end of input.
    End,
}

/// The line editor of a conversation.
pub struct LineEditor {
    editor: Option<Reedline>,
}

/// The file the history is kept in: `QILIN_HISTORY`, else `history.txt` in Qilin's folder of
/// the platform's data place (`~/.local/share/qilin/` on Linux).
pub fn history_path() -> Option<PathBuf> {
    match std::env::var_os("QILIN_HISTORY") {
        Some(path) if !path.is_empty() => Some(PathBuf::from(path)),
        _ => dirs::data_dir().map(|dir| dir.join("qilin").join("history.txt")),
    }
}

impl LineEditor {
    /// A line editor with the history of earlier conversations (none, with a warning, when
    /// its file cannot be used).
    pub fn new() -> Self {
        let mut keybindings = default_emacs_keybindings();
        for modifier in [KeyModifiers::SHIFT, KeyModifiers::ALT] {
            keybindings.add_binding(
                modifier,
                KeyCode::Enter,
                ReedlineEvent::Edit(vec![EditCommand::InsertNewline]),
            );
        }
        let mut editor = Reedline::create()
            .with_edit_mode(Box::new(Emacs::new(keybindings)))
            .with_validator(Box::new(BackslashContinues))
            .use_bracketed_paste(true);
        if let Some(path) = history_path() {
            if let Some(dir) = path.parent() {
                let _ = std::fs::create_dir_all(dir);
            }
            match FileBackedHistory::with_file(HISTORY_SIZE, path.clone()) {
                Ok(history) => editor = editor.with_history(Box::new(history)),
                Err(err) => eprintln!(
                    "warning: the input history {} cannot be used ({err}); none is kept",
                    path.display()
                ),
            }
        }
        LineEditor {
            editor: Some(editor),
        }
    }

    /// Puts `draft` (what was typed while a turn ran) in the input, to be edited or sent.
    pub fn set_draft(&mut self, draft: &str) {
        if let Some(editor) = &mut self.editor
            && !draft.is_empty()
        {
            editor.run_edit_commands(&[EditCommand::InsertString(draft.to_string())]);
        }
    }

    /// Reads one entry at the prompt (the editor runs on a blocking thread).
    pub async fn read(&mut self) -> anyhow::Result<Typed> {
        let Some(mut editor) = self.editor.take() else {
            return Ok(Typed::End);
        };
        let (editor, signal) = tokio::task::spawn_blocking(move || {
            let signal = editor.read_line(&ConversationPrompt);
            (editor, signal)
        })
        .await?;
        self.editor = Some(editor);
        Ok(match signal? {
            Signal::Success(line) => Typed::Line(joined(&line)),
            Signal::CtrlC => Typed::Interrupt,
            Signal::CtrlD => Typed::End,
            Signal::HostCommand(line) | Signal::ExternalBreak(line) => Typed::Line(joined(&line)),
            _ => Typed::Interrupt,
        })
    }
}

/// A line ending in `\` goes on to the next line.
struct BackslashContinues;

impl Validator for BackslashContinues {
    fn validate(&self, line: &str) -> ValidationResult {
        if line.ends_with('\\') {
            ValidationResult::Incomplete
        } else {
            ValidationResult::Complete
        }
    }
}

/// The message typed: the `\` that continued a line removed.
fn joined(line: &str) -> String {
    line.replace("\\\r\n", "\n").replace("\\\n", "\n")
}

/// A prompt that is exactly its text (an answer's prompt: `number> `).
pub struct PlainPrompt(pub String);

impl Prompt for PlainPrompt {
    fn render_prompt_left(&self) -> Cow<'_, str> {
        Cow::Borrowed(&self.0)
    }

    fn render_prompt_right(&self) -> Cow<'_, str> {
        Cow::Borrowed("")
    }

    fn render_prompt_indicator(&self, _mode: PromptEditMode) -> Cow<'_, str> {
        Cow::Borrowed("")
    }

    fn render_prompt_multiline_indicator(&self) -> Cow<'_, str> {
        Cow::Borrowed("  ")
    }

    fn render_prompt_history_search_indicator(&self, search: PromptHistorySearch) -> Cow<'_, str> {
        Cow::Owned(format!("(search: {}) ", search.term))
    }
}

/// `› ` before the input, two spaces before its further lines.
struct ConversationPrompt;

impl Prompt for ConversationPrompt {
    fn render_prompt_left(&self) -> Cow<'_, str> {
        Cow::Borrowed("")
    }

    fn render_prompt_right(&self) -> Cow<'_, str> {
        Cow::Borrowed("")
    }

    fn render_prompt_indicator(&self, _mode: PromptEditMode) -> Cow<'_, str> {
        Cow::Borrowed("› ")
    }

    fn render_prompt_multiline_indicator(&self) -> Cow<'_, str> {
        Cow::Borrowed("  ")
    }

    fn render_prompt_history_search_indicator(&self, search: PromptHistorySearch) -> Cow<'_, str> {
        Cow::Owned(format!("(search: {}) ", search.term))
    }
}

/// A slash command typed at the conversation's prompt.
#[derive(Debug, PartialEq, Eq)]
pub enum Slash {
    /// `/help`: the commands.
    Help,
    /// `/exit` or `/quit`.
    Exit,
    /// `/clear`: a new session, same agent and model.
    Clear,
    /// `/model [SPEC]`: show the model, or start a new session with another.
    Model(Option<String>),
    /// `/agent`: show the agent.
    Agent,
    /// `/sessions`: the workspace's recent sessions.
    Sessions,
    /// `/resume ID`: continue a stored session.
    Resume(Option<String>),
    /// `/cost`: the tokens and cost of this session.
    Cost,
    /// `/compact`: the model summarises the conversation, which the summary then stands for.
    Compact,
    /// `/goal …`: set, show, pause, resume or clear the session's goal, or raise its budget.
    Goal(GoalCommand),
    /// A command Qilin does not know.
    Unknown(String),
}

/// What `/goal` asks for.
#[derive(Debug, PartialEq, Eq)]
pub enum GoalCommand {
    /// `/goal`: show the goal.
    Show,
    /// `/goal OBJECTIVE`: set a goal and work on it.
    Set(String),
    /// `/goal pause`.
    Pause,
    /// `/goal resume`: resume a paused or budget-limited goal.
    Resume,
    /// `/goal clear`.
    Clear,
    /// `/goal budget N`: set the goal's token budget to N (resuming a budget-limited goal);
    /// `None` when N is not a positive whole number.
    Budget(Option<u64>),
}

/// What `/help` prints.
pub const SLASH_HELP: &str = "\
/help            these commands
/exit, /quit     leave (Ctrl-D too; Ctrl-C twice)
/clear           start a new session with the same agent and model
/model [SPEC]    show the model, or start a new session with SPEC (openai:NAME, anthropic:NAME)
/agent           show the agent
/sessions        the workspace's recent sessions
/resume ID       continue a stored session
/cost            the tokens this session used, and their cost when its model has a price
/compact         summarise the conversation so far to free context (Ctrl-C stops it)
/goal OBJECTIVE  set a goal: the session works on it turn after turn until its checks pass
/goal            show the goal; /goal pause, /goal resume, /goal clear
/goal budget N   set the goal's token budget to N (resumes a budget-limited goal)
Esc or Ctrl-C interrupts a running turn; Shift+Enter, Alt+Enter or a line ending in \\ adds a line.";

/// The `/goal` command whose words after `/goal` are `rest`.
fn goal_command(rest: &str) -> GoalCommand {
    let mut words = rest.split_whitespace();
    match (words.next(), words.next(), words.next()) {
        (None, ..) => GoalCommand::Show,
        (Some("pause"), None, _) => GoalCommand::Pause,
        (Some("resume"), None, _) => GoalCommand::Resume,
        (Some("clear"), None, _) => GoalCommand::Clear,
        (Some("budget"), amount, None) => GoalCommand::Budget(
            amount
                .and_then(|amount| amount.replace('_', "").parse::<u64>().ok())
                .filter(|&tokens| tokens > 0),
        ),
        _ => GoalCommand::Set(rest.to_string()),
    }
}

/// The slash command `line` is, or `None` for a message (a line not starting with `/`, or a
/// path such as `/etc/hosts is missing`).
pub fn slash(line: &str) -> Option<Slash> {
    let line = line.trim();
    let rest = line.strip_prefix('/')?;
    let mut words = rest.split_whitespace();
    let name = words.next().unwrap_or_default();
    if name.contains('/') {
        return None;
    }
    if name == "goal" {
        return Some(Slash::Goal(goal_command(rest["goal".len()..].trim())));
    }
    let argument = words.next().map(str::to_string);
    Some(match name {
        "help" | "?" => Slash::Help,
        "exit" | "quit" => Slash::Exit,
        "clear" | "new" => Slash::Clear,
        "model" => Slash::Model(argument),
        "agent" => Slash::Agent,
        "sessions" => Slash::Sessions,
        "resume" => Slash::Resume(argument),
        "cost" => Slash::Cost,
        "compact" => Slash::Compact,
        other => Slash::Unknown(other.to_string()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slash_commands_are_recognised_and_paths_are_messages() {
        assert_eq!(slash("/help"), Some(Slash::Help));
        assert_eq!(slash("  /exit "), Some(Slash::Exit));
        assert_eq!(
            slash("/model openai:gpt-4.1"),
            Some(Slash::Model(Some("openai:gpt-4.1".into())))
        );
        assert_eq!(slash("/resume"), Some(Slash::Resume(None)));
        assert_eq!(slash("/compact"), Some(Slash::Compact));
        assert_eq!(
            slash("/frobnicate"),
            Some(Slash::Unknown("frobnicate".into()))
        );
        assert_eq!(slash("/etc/hosts is missing"), None);
        assert_eq!(slash("/goal"), Some(Slash::Goal(GoalCommand::Show)));
        assert_eq!(slash("/goal pause"), Some(Slash::Goal(GoalCommand::Pause)));
        assert_eq!(
            slash("/goal budget 50_000"),
            Some(Slash::Goal(GoalCommand::Budget(Some(50_000))))
        );
        assert_eq!(
            slash("/goal budget lots"),
            Some(Slash::Goal(GoalCommand::Budget(None)))
        );
        assert_eq!(
            slash("/goal make every test pass"),
            Some(Slash::Goal(GoalCommand::Set("make every test pass".into())))
        );
        assert_eq!(
            slash("/goal pause the build when red"),
            Some(Slash::Goal(GoalCommand::Set(
                "pause the build when red".into()
            )))
        );
        assert_eq!(slash("fix the test"), None);
    }

    #[test]
    fn a_continued_line_loses_its_backslash() {
        assert_eq!(joined("one\\\ntwo"), "one\ntwo");
        assert_eq!(joined("plain"), "plain");
        assert!(matches!(
            BackslashContinues.validate("more\\"),
            ValidationResult::Incomplete
        ));
    }
}
