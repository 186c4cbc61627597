//! Asking the user on the terminal — the session's requests: an approval the review policy
//! asks for, or the `question` tool's questions. The live display pauses; the call and what it
//! would do (the command, the diff, the address) are shown first, then the choice: allow once,
//! allow for the session, deny, deny with a message. Ctrl-C or Esc denies and interrupts the
//! turn; at a question it ends the whole question.

use crate::input::PlainPrompt;
use crate::keys::Keys;
use crate::render::{TerminalRenderer, visible};
use qilin_protocol::{
    Answer, CallPresentation, CallStatus, Detail, Question, RequestAsk, RequestOpenedEvent,
    SessionGrant,
};
use qilin_tool::RequestReply;
use reedline::{Reedline, Signal};
use std::io::Write;
use std::sync::Arc;
use tokio::sync::Mutex;

/// The person's answer to a request, and whether they asked to stop the turn.
pub struct Asked {
    /// The reply for the session.
    pub reply: RequestReply,
    /// Ctrl-C or Esc: the turn is to be interrupted once the reply is given.
    pub interrupt: bool,
}

/// Asks the user what `opened` asks, with the terminal to itself (the live display is paused
/// and the renderer locked until the answer), and returns the answer for the session. End of
/// input denies an approval and dismisses questions.
pub async fn ask_on_terminal(
    renderer: &Arc<Mutex<TerminalRenderer>>,
    keys: &Keys,
    opened: &RequestOpenedEvent,
) -> Asked {
    let mut renderer = Arc::clone(renderer).lock_owned().await;
    renderer.suspend();
    let ask = opened.ask.clone();
    let tool = opened.tool_name.clone();
    let shown = match &ask {
        RequestAsk::Approval {
            reason,
            presentation,
            arguments,
            detail,
        } => Some(approval_lines(
            &renderer,
            presentation,
            reason,
            arguments,
            detail.as_ref(),
        )),
        RequestAsk::Question { .. } => None,
    };
    let keys = keys.clone();
    let asked = tokio::task::spawn_blocking(move || {
        // The turn's watch of the keys lets go of the terminal while it asks.
        let _paused = keys.pause();
        ask_and_answer(ask, &tool, shown)
    })
    .await;
    drop(renderer);
    asked.unwrap_or(Asked {
        reply: RequestReply::Dismiss,
        interrupt: false,
    })
}

/// Puts `ask` on the terminal (`shown`: an approval's lines) and reads the answer.
fn ask_and_answer(ask: RequestAsk, tool: &str, shown: Option<Vec<String>>) -> Asked {
    match ask {
        RequestAsk::Approval { arguments, .. } => {
            let mut out = std::io::stderr();
            for line in shown.unwrap_or_default() {
                let _ = writeln!(out, "{line}");
            }
            let grant = session_grant(tool, &arguments);
            let _ = write!(
                out,
                "  y yes · a yes, {} this session · n no · m no, and say why · Esc stop ",
                grant_label(&grant)
            );
            let _ = out.flush();
            let choice = read_choice();
            let _ = writeln!(out);
            let (reply, interrupt) = match choice {
                Choice::Once => (RequestReply::Approve, false),
                Choice::Session => (RequestReply::ApproveForSession(grant), false),
                Choice::Deny => (RequestReply::Deny { reason: None }, false),
                Choice::DenyWithMessage => {
                    match read_line("  what should the model do instead? ") {
                        LineRead::Line(message) if !message.trim().is_empty() => (
                            RequestReply::Deny {
                                reason: Some(message.trim().to_string()),
                            },
                            false,
                        ),
                        LineRead::Line(_) | LineRead::End => {
                            (RequestReply::Deny { reason: None }, false)
                        }
                        LineRead::Interrupt => (interrupted_denial(), true),
                    }
                }
                Choice::Interrupt => (interrupted_denial(), true),
            };
            let said = match (&reply, interrupt) {
                (_, true) => "⊘ denied; the turn stops",
                (RequestReply::Approve, _) => "✓ allowed once",
                (RequestReply::ApproveForSession(_), _) => "✓ allowed for this session",
                _ => "⊘ denied",
            };
            let _ = writeln!(out, "  {said}");
            Asked { reply, interrupt }
        }
        RequestAsk::Question { questions } => {
            let mut out = std::io::stderr();
            match ask_all(&questions, &mut read_line, &mut out) {
                Ok(answers) => Asked {
                    reply: RequestReply::Answer(answers),
                    interrupt: false,
                },
                Err(stopped) => {
                    let _ = writeln!(out, "  ⊘ the question was dismissed");
                    Asked {
                        reply: RequestReply::Dismiss,
                        interrupt: stopped == LineRead::Interrupt,
                    }
                }
            }
        }
    }
}

fn interrupted_denial() -> RequestReply {
    RequestReply::Deny {
        reason: Some("The user interrupted instead of answering.".to_string()),
    }
}

/// The call, the reason and a preview of what it would do.
fn approval_lines(
    renderer: &TerminalRenderer,
    presentation: &CallPresentation,
    reason: &str,
    arguments: &serde_json::Value,
    detail: Option<&Detail>,
) -> Vec<String> {
    let style = renderer.style();
    let mut lines = vec![format!(
        "{} {}",
        style.yellow("?"),
        renderer.describe(&presentation_visible(presentation))
    )];
    if !reason.is_empty() {
        lines.push(format!("  {}", style.dim(&visible(reason))));
    }
    let preview: Vec<String> = match detail {
        Some(Detail::Shell { command, .. }) => command_lines(command),
        Some(detail @ Detail::Diff { .. }) => {
            renderer.detail_lines(&sanitized_detail(detail), CallStatus::Ok)
        }
        _ => argument_lines(arguments),
    };
    lines.extend(preview.into_iter().map(|line| format!("  {line}")));
    lines
}

fn presentation_visible(presentation: &CallPresentation) -> CallPresentation {
    CallPresentation {
        action: visible(&presentation.action).into_owned(),
        remark: visible(&presentation.remark).into_owned(),
    }
}

fn sanitized_detail(detail: &Detail) -> Detail {
    match detail {
        Detail::Diff {
            path,
            diff,
            added,
            removed,
        } => Detail::Diff {
            path: visible(path).into_owned(),
            diff: visible(diff).into_owned(),
            added: *added,
            removed: *removed,
        },
        other => other.clone(),
    }
}

fn command_lines(command: &str) -> Vec<String> {
    visible(command)
        .lines()
        .enumerate()
        .map(|(n, line)| {
            if n == 0 {
                format!("$ {line}")
            } else {
                format!("  {line}")
            }
        })
        .collect()
}

/// The arguments as `name: value` lines (a command as `$ …`, a text's lines as they are), not
/// as escaped JSON.
fn argument_lines(arguments: &serde_json::Value) -> Vec<String> {
    let Some(fields) = arguments.as_object() else {
        return vec![visible(&arguments.to_string()).into_owned()];
    };
    if let Some(serde_json::Value::String(command)) = fields.get("command") {
        return command_lines(command);
    }
    let mut lines = Vec::new();
    for (name, value) in fields {
        match value {
            serde_json::Value::String(text) if text.contains('\n') => {
                lines.push(format!("{name}:"));
                lines.extend(visible(text).lines().map(|l| format!("  {l}")));
            }
            serde_json::Value::String(text) => lines.push(format!("{name}: {}", visible(text))),
            other => lines.push(format!("{name}: {}", visible(&other.to_string()))),
        }
    }
    lines
}

/// What an "allow for this session" covers: a bash command's leading words (the program, and
/// its subcommand for the tools that have them), else the whole tool.
fn session_grant(tool: &str, arguments: &serde_json::Value) -> SessionGrant {
    let command = arguments.get("command").and_then(|c| c.as_str());
    let command_prefix = match (tool, command) {
        ("bash", Some(command)) => command_prefix(command),
        _ => None,
    };
    SessionGrant {
        tool: tool.to_string(),
        command_prefix,
    }
}

/// `cargo test --all` → `cargo test`; `ls -la` → `ls`; nothing for an empty command.
fn command_prefix(command: &str) -> Option<String> {
    const WITH_SUBCOMMANDS: &[&str] = &[
        "cargo", "git", "npm", "pnpm", "yarn", "go", "make", "docker", "kubectl", "pip", "uv",
        "poetry", "bundle", "dotnet", "mvn", "gradle",
    ];
    let mut words = command.split_whitespace();
    let program = words.next()?;
    match words.next() {
        Some(sub)
            if WITH_SUBCOMMANDS.contains(&program)
                && sub
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
                && !sub.starts_with('-') =>
        {
            Some(format!("{program} {sub}"))
        }
        _ => Some(program.to_string()),
    }
}

fn grant_label(grant: &SessionGrant) -> String {
    match &grant.command_prefix {
        Some(prefix) => format!("`{}`", visible(prefix)),
        None => format!("`{}`", visible(&grant.tool)),
    }
}

/// The choice at an approval.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Choice {
    Once,
    Session,
    Deny,
    DenyWithMessage,
    Interrupt,
}

/// The choice a key makes, or `None` for a key that makes none.
fn choice_of(key: &crossterm::event::KeyEvent) -> Option<Choice> {
    use crossterm::event::{KeyCode, KeyModifiers};
    if key.modifiers.contains(KeyModifiers::CONTROL) {
        return match key.code {
            KeyCode::Char('c') | KeyCode::Char('d') => Some(Choice::Interrupt),
            _ => None,
        };
    }
    match key.code {
        KeyCode::Esc => Some(Choice::Interrupt),
        KeyCode::Char('y' | 'Y') => Some(Choice::Once),
        KeyCode::Char('a' | 'A') => Some(Choice::Session),
        KeyCode::Char('n' | 'N') => Some(Choice::Deny),
        KeyCode::Char('m' | 'M') => Some(Choice::DenyWithMessage),
        _ => None,
    }
}

/// Reads keys (the terminal in raw mode meanwhile) until one makes a choice; a terminal that
/// cannot be read denies.
fn read_choice() -> Choice {
    use crossterm::event::{Event, KeyEventKind};
    if crossterm::terminal::enable_raw_mode().is_err() {
        return Choice::Deny;
    }
    let choice = loop {
        match crossterm::event::read() {
            Ok(Event::Key(key)) if key.kind != KeyEventKind::Release => {
                if let Some(choice) = choice_of(&key) {
                    break choice;
                }
            }
            Ok(_) => {}
            Err(_) => break Choice::Deny,
        }
    };
    let _ = crossterm::terminal::disable_raw_mode();
    choice
}

/// One line read at a prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
enum LineRead {
    Line(String),
    /// Ctrl-C.
    Interrupt,
    /// Ctrl-D or the end of input.
    End,
}

/// A line typed after `prompt`, in a line editor of its own (so Ctrl-C is a key, not a signal).
fn read_line(prompt: &str) -> LineRead {
    let mut editor = Reedline::create();
    match editor.read_line(&PlainPrompt(prompt.to_string())) {
        Ok(Signal::Success(line)) => LineRead::Line(line),
        Ok(Signal::CtrlC) => LineRead::Interrupt,
        _ => LineRead::End,
    }
}

/// Asks every question in order; stops at the first Ctrl-C or end of input (returned), so no
/// answer is invented and no further question asked.
fn ask_all(
    questions: &[Question],
    read: &mut impl FnMut(&str) -> LineRead,
    out: &mut impl Write,
) -> Result<Vec<Answer>, LineRead> {
    let mut answers = Vec::with_capacity(questions.len());
    for question in questions {
        let answer = ask(question, read, out)?;
        answers.push(Answer {
            id: question.id.clone(),
            answer,
        });
    }
    Ok(answers)
}

/// One question's answer, or how the asking stopped.
fn ask(
    question: &Question,
    read: &mut impl FnMut(&str) -> LineRead,
    out: &mut impl Write,
) -> Result<Vec<String>, LineRead> {
    let _ = writeln!(out, "? {}", visible(&question.question));
    let options = question.options.as_deref().unwrap_or_default();
    let multi = question.multi_select.unwrap_or(false);
    for (number, option) in options.iter().enumerate() {
        let _ = writeln!(out, "  {}) {}", number + 1, visible(option));
    }
    let _ = out.flush();
    loop {
        let hint = match (options.is_empty(), multi) {
            (true, _) => "> ",
            (false, false) => "number> ",
            (false, true) => "numbers, comma-separated> ",
        };
        let line = match read(hint) {
            LineRead::Line(line) => line,
            stopped => return Err(stopped),
        };
        let line = line.trim();
        if options.is_empty() {
            if !line.is_empty() {
                return Ok(vec![line.to_string()]);
            }
            continue;
        }
        match pick(line, options, multi) {
            Some(picked) => return Ok(picked),
            None => {
                let _ = writeln!(
                    out,
                    "  please answer with {} between 1 and {}",
                    if multi { "numbers" } else { "one number" },
                    options.len()
                );
            }
        }
    }
}

/// The options named by `line` (1-based numbers), or `None` when it names none or a bad one.
fn pick(line: &str, options: &[String], multi: bool) -> Option<Vec<String>> {
    let numbers: Vec<usize> = line
        .split(',')
        .map(|part| part.trim().parse::<usize>().ok())
        .collect::<Option<_>>()?;
    if numbers.is_empty() || (!multi && numbers.len() != 1) {
        return None;
    }
    numbers
        .into_iter()
        .map(|n| options.get(n.checked_sub(1)?).cloned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

    fn question(options: Option<&[&str]>, multi: bool) -> Question {
        Question {
            id: "q".into(),
            question: "Which?".into(),
            options: options.map(|o| o.iter().map(|s| s.to_string()).collect()),
            multi_select: Some(multi),
        }
    }

    /// Reads the given lines, then the end of input.
    fn typed(lines: &[&str]) -> impl FnMut(&str) -> LineRead {
        let mut lines: Vec<LineRead> = lines
            .iter()
            .rev()
            .map(|l| match *l {
                "^C" => LineRead::Interrupt,
                l => LineRead::Line(l.to_string()),
            })
            .collect();
        move |_| lines.pop().unwrap_or(LineRead::End)
    }

    #[test]
    fn a_bad_choice_is_asked_again_and_a_good_one_taken() {
        let mut shown = Vec::new();
        let answers = ask_all(
            &[question(Some(&["red", "blue"]), false)],
            &mut typed(&["7", "foo", "2"]),
            &mut shown,
        )
        .unwrap();
        assert_eq!(answers[0].answer, ["blue"]);
        let shown = String::from_utf8(shown).unwrap();
        assert_eq!(shown.matches("please answer").count(), 2, "{shown}");
    }

    #[test]
    fn several_choices_and_free_text_are_answered() {
        let questions = [
            question(Some(&["a", "b", "c"]), true),
            question(None, false),
        ];
        let answers = ask_all(
            &questions,
            &mut typed(&["1, 3", "", "hello there"]),
            &mut Vec::new(),
        )
        .unwrap();
        assert_eq!(answers[0].answer, ["a", "c"]);
        assert_eq!(answers[1].answer, ["hello there"]);
    }

    #[test]
    fn an_interrupt_ends_the_whole_question_and_the_end_of_input_invents_nothing() {
        let mut shown = Vec::new();
        let questions = [question(None, false), question(None, false)];
        assert_eq!(
            ask_all(&questions, &mut typed(&["^C", "never read"]), &mut shown),
            Err(LineRead::Interrupt)
        );
        let shown = String::from_utf8(shown).unwrap();
        assert_eq!(shown.matches("? Which?").count(), 1, "{shown}");
        assert_eq!(
            ask_all(&[question(None, false)], &mut typed(&[]), &mut Vec::new()),
            Err(LineRead::End)
        );
    }

    #[test]
    fn keys_choose_and_escape_or_ctrl_c_interrupt() {
        let key = |code, modifiers| choice_of(&KeyEvent::new(code, modifiers));
        assert_eq!(
            key(KeyCode::Char('y'), KeyModifiers::NONE),
            Some(Choice::Once)
        );
        assert_eq!(
            key(KeyCode::Char('a'), KeyModifiers::NONE),
            Some(Choice::Session)
        );
        assert_eq!(
            key(KeyCode::Char('n'), KeyModifiers::NONE),
            Some(Choice::Deny)
        );
        assert_eq!(
            key(KeyCode::Char('m'), KeyModifiers::NONE),
            Some(Choice::DenyWithMessage)
        );
        assert_eq!(
            key(KeyCode::Esc, KeyModifiers::NONE),
            Some(Choice::Interrupt)
        );
        assert_eq!(
            key(KeyCode::Char('c'), KeyModifiers::CONTROL),
            Some(Choice::Interrupt)
        );
        assert_eq!(key(KeyCode::Enter, KeyModifiers::NONE), None);
    }

    #[test]
    fn a_session_grant_covers_the_program_and_its_subcommand() {
        assert_eq!(
            command_prefix("cargo test --all").as_deref(),
            Some("cargo test")
        );
        assert_eq!(
            command_prefix("git push origin main").as_deref(),
            Some("git push")
        );
        assert_eq!(command_prefix("ls -la").as_deref(), Some("ls"));
        assert_eq!(command_prefix("git --version").as_deref(), Some("git"));
        assert_eq!(command_prefix("   "), None);
        let grant = session_grant("web_fetch", &serde_json::json!({"url": "https://x.test"}));
        assert_eq!(grant.command_prefix, None);
    }

    #[test]
    fn arguments_are_shown_as_lines_not_escaped_json() {
        let lines = argument_lines(&serde_json::json!({
            "path": "notes.md",
            "content": "one\ntwo",
        }));
        assert_eq!(lines, ["content:", "  one", "  two", "path: notes.md"]);
        assert_eq!(
            argument_lines(&serde_json::json!({"command": "make\n  all"})),
            ["$ make", "    all"]
        );
    }
}
