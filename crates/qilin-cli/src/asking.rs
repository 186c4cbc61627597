//! Asking the user on the terminal — the `question` tool's answers and the review policy's
//! approvals: the live display pauses, the question goes to standard error and the answer
//! comes from standard input.

use crate::render::{TerminalRenderer, visible};
use futures_util::future::BoxFuture;
use qilin_tool::{Approver, ReviewRequest};
use qilin_tools::{Answer, AnswerError, Answerer, Question};
use std::io::{BufRead, Stderr, StdinLock, Write};
use std::sync::Arc;
use tokio::sync::Mutex;

/// Runs `ask` with the terminal to itself: the live display is paused (and the renderer
/// locked) until it returns.
async fn with_terminal<T: Send + 'static>(
    renderer: &Arc<Mutex<TerminalRenderer>>,
    ask: impl FnOnce(&mut StdinLock<'static>, &mut Stderr) -> T + Send + 'static,
) -> Result<T, tokio::task::JoinError> {
    let mut renderer = Arc::clone(renderer).lock_owned().await;
    renderer.suspend();
    let asked = tokio::task::spawn_blocking(move || {
        let mut input = std::io::stdin().lock();
        let mut prompt = std::io::stderr();
        ask(&mut input, &mut prompt)
    })
    .await;
    drop(renderer);
    asked
}

/// Asks on the terminal that `renderer` draws on.
pub struct TerminalAnswerer {
    renderer: Arc<Mutex<TerminalRenderer>>,
}

impl TerminalAnswerer {
    /// An answerer sharing the terminal with `renderer`.
    pub fn new(renderer: Arc<Mutex<TerminalRenderer>>) -> Self {
        TerminalAnswerer { renderer }
    }
}

impl Answerer for TerminalAnswerer {
    fn answer<'a>(
        &'a self,
        questions: &'a [Question],
    ) -> BoxFuture<'a, Result<Vec<Answer>, AnswerError>> {
        let questions = questions.to_vec();
        Box::pin(async move {
            with_terminal(&self.renderer, move |input, prompt| {
                ask_all(&questions, input, prompt)
            })
            .await
            .map_err(|err| AnswerError::Unavailable(format!("the terminal prompt failed: {err}")))?
        })
    }
}

/// Approves calls the review policy asks about, on the terminal that `renderer` draws on.
pub struct TerminalApprover {
    renderer: Arc<Mutex<TerminalRenderer>>,
}

impl TerminalApprover {
    /// An approver sharing the terminal with `renderer`.
    pub fn new(renderer: Arc<Mutex<TerminalRenderer>>) -> Self {
        TerminalApprover { renderer }
    }
}

impl Approver for TerminalApprover {
    fn approve<'a>(&'a self, request: ReviewRequest<'a>, reason: &'a str) -> BoxFuture<'a, bool> {
        let question = format!(
            "Allow `{}` {}? ({reason})",
            request.tool,
            serde_json::to_string(request.arguments).unwrap_or_default()
        );
        Box::pin(async move {
            with_terminal(&self.renderer, move |input, prompt| {
                confirm(&question, input, prompt)
            })
            .await
            .unwrap_or(false)
        })
    }
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

/// Asks every question in order; end of input cancels.
fn ask_all(
    questions: &[Question],
    input: &mut impl BufRead,
    prompt: &mut impl Write,
) -> Result<Vec<Answer>, AnswerError> {
    questions
        .iter()
        .map(|question| {
            Ok(Answer {
                id: question.id.clone(),
                answer: ask(question, input, prompt)?,
            })
        })
        .collect()
}

fn ask(
    question: &Question,
    input: &mut impl BufRead,
    prompt: &mut impl Write,
) -> Result<Vec<String>, AnswerError> {
    let unavailable = |err: std::io::Error| AnswerError::Unavailable(err.to_string());
    writeln!(prompt, "? {}", visible(&question.question)).map_err(unavailable)?;
    let options = question.options.as_deref().unwrap_or_default();
    let multi = question.multi_select.unwrap_or(false);
    for (number, option) in options.iter().enumerate() {
        writeln!(prompt, "  {}) {}", number + 1, visible(option)).map_err(unavailable)?;
    }
    loop {
        let hint = match (options.is_empty(), multi) {
            (true, _) => "> ",
            (false, false) => "number> ",
            (false, true) => "numbers, comma-separated> ",
        };
        write!(prompt, "{hint}").map_err(unavailable)?;
        prompt.flush().map_err(unavailable)?;
        let mut line = String::new();
        if input.read_line(&mut line).map_err(unavailable)? == 0 {
            return Err(AnswerError::Cancelled);
        }
        let line = line.trim();
        if options.is_empty() {
            if !line.is_empty() {
                return Ok(vec![line.to_string()]);
            }
            continue;
        }
        match pick(line, options, multi) {
            Some(picked) => return Ok(picked),
            None => writeln!(
                prompt,
                "  please answer with {} between 1 and {}",
                if multi { "numbers" } else { "one number" },
                options.len()
            )
            .map_err(unavailable)?,
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
    fn end_of_input_cancels_without_inventing_an_answer() {
        let mut input = "".as_bytes();
        let result = ask_all(&[question(None, false)], &mut input, &mut Vec::new());
        assert_eq!(result.unwrap_err(), AnswerError::Cancelled);
    }
}
