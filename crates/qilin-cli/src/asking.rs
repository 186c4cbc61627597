//! Asking the user on the terminal — the session's requests: an approval the review policy
//! asks for, or the `question` tool's questions. The live display pauses, the question goes to
//! standard error and the answer comes from standard input.

use crate::render::{TerminalRenderer, visible};
use qilin_protocol::{Answer, Question, RequestAsk, RequestOpenedEvent};
use qilin_tool::RequestReply;
use std::io::{BufRead, Write};
use std::sync::Arc;
use tokio::sync::Mutex;

/// Asks the user what `opened` asks, with the terminal to itself (the live display is paused
/// and the renderer locked until the answer), and returns the answer for the session. End of
/// input declines an approval and dismisses questions.
pub async fn ask_on_terminal(
    renderer: &Arc<Mutex<TerminalRenderer>>,
    opened: &RequestOpenedEvent,
) -> RequestReply {
    let mut renderer = Arc::clone(renderer).lock_owned().await;
    renderer.suspend();
    let ask = opened.ask.clone();
    let tool = opened.tool_name.clone();
    let asked = tokio::task::spawn_blocking(move || {
        let mut input = std::io::stdin().lock();
        let mut prompt = std::io::stderr();
        match ask {
            RequestAsk::Approval {
                reason, arguments, ..
            } => {
                let question = format!(
                    "Allow `{}` {}? ({})",
                    visible(&tool),
                    visible(&serde_json::to_string(&arguments).unwrap_or_default()),
                    visible(&reason)
                );
                match confirm(&question, &mut input, &mut prompt) {
                    true => RequestReply::Approve,
                    false => RequestReply::Deny { reason: None },
                }
            }
            RequestAsk::Question { questions } => {
                match ask_all(&questions, &mut input, &mut prompt) {
                    Some(answers) => RequestReply::Answer(answers),
                    None => RequestReply::Dismiss,
                }
            }
        }
    })
    .await;
    drop(renderer);
    asked.unwrap_or(RequestReply::Dismiss)
}

/// Asks a yes/no question; only `y` or `yes` approves, end of input declines.
fn confirm(question: &str, input: &mut impl BufRead, prompt: &mut impl Write) -> bool {
    if write!(prompt, "? {question} [y/N] ")
        .and_then(|()| prompt.flush())
        .is_err()
    {
        return false;
    }
    let mut line = String::new();
    match input.read_line(&mut line) {
        Ok(read) if read > 0 => matches!(line.trim().to_ascii_lowercase().as_str(), "y" | "yes"),
        _ => false,
    }
}

/// Asks every question in order; `None` when the input ends (or fails) first, so no answer is
/// invented.
fn ask_all(
    questions: &[Question],
    input: &mut impl BufRead,
    prompt: &mut impl Write,
) -> Option<Vec<Answer>> {
    questions
        .iter()
        .map(|question| {
            Some(Answer {
                id: question.id.clone(),
                answer: ask(question, input, prompt).ok()??,
            })
        })
        .collect()
}

/// One question's answer; `Ok(None)` at end of input.
fn ask(
    question: &Question,
    input: &mut impl BufRead,
    prompt: &mut impl Write,
) -> std::io::Result<Option<Vec<String>>> {
    writeln!(prompt, "? {}", visible(&question.question))?;
    let options = question.options.as_deref().unwrap_or_default();
    let multi = question.multi_select.unwrap_or(false);
    for (number, option) in options.iter().enumerate() {
        writeln!(prompt, "  {}) {}", number + 1, visible(option))?;
    }
    loop {
        let hint = match (options.is_empty(), multi) {
            (true, _) => "> ",
            (false, false) => "number> ",
            (false, true) => "numbers, comma-separated> ",
        };
        write!(prompt, "{hint}")?;
        prompt.flush()?;
        let mut line = String::new();
        if input.read_line(&mut line)? == 0 {
            return Ok(None);
        }
        let line = line.trim();
        if options.is_empty() {
            if !line.is_empty() {
                return Ok(Some(vec![line.to_string()]));
            }
            continue;
        }
        match pick(line, options, multi) {
            Some(picked) => return Ok(Some(picked)),
            None => writeln!(
                prompt,
                "  please answer with {} between 1 and {}",
                if multi { "numbers" } else { "one number" },
                options.len()
            )?,
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

    fn question(options: Option<&[&str]>, multi: bool) -> Question {
        Question {
            id: "q".into(),
            question: "Which?".into(),
            options: options.map(|o| o.iter().map(|s| s.to_string()).collect()),
            multi_select: Some(multi),
        }
    }

    #[test]
    fn a_bad_choice_is_asked_again_and_a_good_one_taken() {
        let mut input = "7\nfoo\n2\n".as_bytes();
        let mut shown = Vec::new();
        let answers = ask_all(
            &[question(Some(&["red", "blue"]), false)],
            &mut input,
            &mut shown,
        )
        .unwrap();
        assert_eq!(answers[0].answer, ["blue"]);
        let shown = String::from_utf8(shown).unwrap();
        assert_eq!(shown.matches("please answer").count(), 2, "{shown}");
    }

    #[test]
    fn several_choices_and_free_text_are_answered() {
        let mut input = "1, 3\n\nhello there\n".as_bytes();
        let questions = [
            question(Some(&["a", "b", "c"]), true),
            question(None, false),
        ];
        let answers = ask_all(&questions, &mut input, &mut Vec::new()).unwrap();
        assert_eq!(answers[0].answer, ["a", "c"]);
        assert_eq!(answers[1].answer, ["hello there"]);
    }

    #[test]
    fn only_yes_approves() {
        for (typed, approved) in [
            ("y\n", true),
            ("YES\n", true),
            ("n\n", false),
            ("\n", false),
            ("", false),
        ] {
            let mut input = typed.as_bytes();
            assert_eq!(
                confirm("Allow?", &mut input, &mut Vec::new()),
                approved,
                "{typed:?}"
            );
        }
    }

    #[test]
    fn end_of_input_dismisses_without_inventing_an_answer() {
        let mut input = "".as_bytes();
        assert_eq!(
            ask_all(&[question(None, false)], &mut input, &mut Vec::new()),
            None
        );
    }
}
