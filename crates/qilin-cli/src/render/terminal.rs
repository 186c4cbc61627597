//! Renders events as lines: assistant text, one line per finished call with its status glyph,
//! presentation and elapsed time, details (shell output head and tail, diffs with counts),
//! code-mode calls indented under their `run_code`, and — on a terminal — a live region at
//! the bottom with a spinner for each running call.

use super::sanitize::sanitized;
use super::style::{SPINNER, Style};
use qilin_protocol::{
    CallPresentation, CallStatus, ContentBlock, Detail, Event, EventBody, FinishReason,
    ToolResultEvent,
};
use std::collections::{HashMap, HashSet};
use std::io::Write;
use std::time::Instant;

const WIDTH: usize = 110;
const DETAIL_LINES: usize = 6;
const DIFF_LINES: usize = 30;

struct Running {
    call_id: String,
    depth: usize,
    presentation: CallPresentation,
    started: Instant,
    last_output: String,
}

/// Draws a session's events on a terminal (or any writer).
pub struct TerminalRenderer {
    style: Style,
    out: Box<dyn Write + Send>,
    running: Vec<Running>,
    depth: HashMap<String, usize>,
    presentations: HashMap<String, CallPresentation>,
    headed: HashSet<String>,
    text: String,
    live_lines: usize,
    frame: usize,
}

impl TerminalRenderer {
    /// A renderer writing to `out` in `style`.
    pub fn new(style: Style, out: Box<dyn Write + Send>) -> Self {
        TerminalRenderer {
            style,
            out,
            running: Vec::new(),
            depth: HashMap::new(),
            presentations: HashMap::new(),
            headed: HashSet::new(),
            text: String::new(),
            live_lines: 0,
            frame: 0,
        }
    }

    /// Renders one event; every string from the model or a tool in it is made visible first
    /// (control and escape sequences shown, never executed).
    pub fn handle(&mut self, event: &Event) {
        let event = sanitized(event);
        match &event.body {
            EventBody::SessionStarted(_)
            | EventBody::TurnStarted { .. }
            | EventBody::StepStarted { .. }
            | EventBody::StepReasoningDelta { .. }
            | EventBody::StepReasoningEnd { .. }
            | EventBody::RequestOpened(_)
            | EventBody::RequestResolved(_) => {}
            EventBody::StepTextDelta { text, .. } => {
                self.text.push_str(text);
                if let Some(end) = self.text.rfind('\n') {
                    let complete: String = self.text.drain(..=end).collect();
                    let lines = complete.lines().map(str::to_string).collect();
                    self.permanent(lines);
                }
            }
            EventBody::StepFinished { .. } => self.flush_text(),
            EventBody::ToolPreparing(preparing) => {
                if !self.running.iter().any(|r| r.call_id == preparing.call_id) {
                    self.running.push(Running {
                        call_id: preparing.call_id.clone(),
                        depth: 0,
                        presentation: CallPresentation::new(&preparing.tool_name, "preparing…"),
                        started: Instant::now(),
                        last_output: String::new(),
                    });
                    self.redraw();
                }
            }
            EventBody::ToolStart(start) => {
                self.flush_text();
                let depth = match &start.parent_call_id {
                    Some(parent) => {
                        self.head_parent(parent);
                        self.depth.get(parent).map_or(0, |d| d + 1)
                    }
                    None => 0,
                };
                self.depth.insert(start.call_id.clone(), depth);
                self.presentations
                    .insert(start.call_id.clone(), start.presentation.clone());
                match self.running.iter_mut().find(|r| r.call_id == start.call_id) {
                    Some(running) => {
                        running.presentation = start.presentation.clone();
                        running.depth = depth;
                    }
                    None => self.running.push(Running {
                        call_id: start.call_id.clone(),
                        depth,
                        presentation: start.presentation.clone(),
                        started: Instant::now(),
                        last_output: String::new(),
                    }),
                }
                self.redraw();
            }
            EventBody::ToolProgress(progress) => {
                if let Some(running) = self
                    .running
                    .iter_mut()
                    .find(|r| r.call_id == progress.call_id)
                    && let Some(line) = progress.text.lines().rev().find(|l| !l.trim().is_empty())
                {
                    running.last_output = line.trim().to_string();
                    self.redraw();
                }
            }
            EventBody::ToolResult(result) => {
                self.running.retain(|r| r.call_id != result.call_id);
                let lines = self.result_lines(result);
                self.permanent(lines);
            }
            EventBody::TurnFinished {
                reason, message, ..
            } => {
                self.flush_text();
                let line = match reason {
                    FinishReason::Completed => None,
                    FinishReason::MaxSteps => Some(
                        self.style
                            .yellow("■ stopped: the agent reached its step limit"),
                    ),
                    FinishReason::Interrupted => Some(self.style.yellow("■ interrupted")),
                    FinishReason::MaxTokens => Some(self.style.yellow(&format!(
                        "■ stopped: the answer reached the model's token limit{}",
                        message.as_deref().map(|m| format!(" ({m})")).unwrap_or_default()
                    ))),
                    FinishReason::Refused => Some(self.style.yellow(&format!(
                        "■ the model refused{}",
                        message.as_deref().map(|m| format!(": {m}")).unwrap_or_default()
                    ))),
                    FinishReason::Error => Some(self.style.red(&format!(
                        "✗ the turn failed: {}",
                        message.as_deref().unwrap_or("unknown error")
                    ))),
                };
                self.permanent(line.into_iter().collect());
            }
        }
    }

    /// Advances the spinners (call it every ~80 ms while a turn runs).
    pub fn tick(&mut self) {
        self.frame = self.frame.wrapping_add(1);
        if !self.running.is_empty() {
            self.redraw();
        }
    }

    /// Clears the live region and writes what is left, before the program prints anything
    /// else or exits.
    pub fn finish(&mut self) {
        self.flush_text();
        self.clear_live();
        let _ = self.out.flush();
    }

    /// Clears the live region so that something else (a question) can use the terminal;
    /// the next event or tick draws it again.
    pub fn suspend(&mut self) {
        self.clear_live();
        let _ = self.out.flush();
    }

    fn flush_text(&mut self) {
        if !self.text.is_empty() {
            let rest = std::mem::take(&mut self.text);
            self.permanent(rest.lines().map(str::to_string).collect());
        }
    }

    /// A call whose code made a call gets a header line above its nested calls.
    fn head_parent(&mut self, parent: &str) {
        if self.headed.contains(parent) {
            return;
        }
        let Some(presentation) = self.presentations.get(parent).cloned() else {
            return;
        };
        self.headed.insert(parent.to_string());
        let depth = self.depth.get(parent).copied().unwrap_or(0);
        let line = format!(
            "{}{} {}",
            indent(depth),
            self.style.cyan("▸"),
            self.describe(&presentation)
        );
        self.permanent(vec![line]);
    }

    fn result_lines(&self, result: &ToolResultEvent) -> Vec<String> {
        let depth = self.depth.get(&result.call_id).copied().unwrap_or(0);
        let presentation = self
            .presentations
            .get(&result.call_id)
            .cloned()
            .unwrap_or_else(|| CallPresentation::new(&result.tool_name, ""));
        let failed_command = matches!(
            result.detail,
            Some(Detail::Shell { exit_code, .. }) if exit_code != Some(0)
        );
        let glyph = if failed_command {
            self.style.red("✗")
        } else {
            self.style.status_glyph(result.status)
        };
        let mut lines = vec![format!(
            "{}{glyph} {}  {}",
            indent(depth),
            self.describe(&presentation),
            self.style.dim(&elapsed(result.duration_ms))
        )];
        let pad = indent(depth + 1);
        let detail_lines = match &result.detail {
            Some(detail) => self.detail_lines(detail, result.status),
            None if result.status != CallStatus::Ok => error_text(&result.content)
                .lines()
                .take(DETAIL_LINES)
                .map(|l| self.style.red(l))
                .collect(),
            None => Vec::new(),
        };
        lines.extend(detail_lines.into_iter().map(|l| format!("{pad}{l}")));
        lines
    }

    fn detail_lines(&self, detail: &Detail, status: CallStatus) -> Vec<String> {
        match detail {
            Detail::Shell {
                output, exit_code, ..
            } => {
                let mut lines: Vec<String> = head_and_tail(output, 5)
                    .into_iter()
                    .map(|l| self.style.dim(&l))
                    .collect();
                match exit_code {
                    Some(0) => {}
                    Some(code) => lines.push(self.style.red(&format!("exit code {code}"))),
                    None => lines.push(self.style.red("killed by a signal")),
                }
                lines
            }
            Detail::Diff {
                path,
                diff,
                added,
                removed,
            } => {
                let mut lines = vec![format!(
                    "{} {} {}",
                    self.style.green(&format!("+{added}")),
                    self.style.red(&format!("−{removed}")),
                    path
                )];
                let body: Vec<&str> = diff
                    .lines()
                    .filter(|l| !l.starts_with("+++") && !l.starts_with("---"))
                    .collect();
                for line in body.iter().take(DIFF_LINES) {
                    lines.push(match line.chars().next() {
                        Some('+') => self.style.green(line),
                        Some('-') => self.style.red(line),
                        Some('@') => self.style.cyan(line),
                        _ => self.style.dim(line),
                    });
                }
                if body.len() > DIFF_LINES {
                    lines.push(
                        self.style
                            .dim(&format!("… {} more lines", body.len() - DIFF_LINES)),
                    );
                }
                lines
            }
            Detail::Text { text } | Detail::Markdown { markdown: text } => {
                let paint = |l: &str| {
                    if status == CallStatus::Ok {
                        self.style.dim(l)
                    } else {
                        self.style.red(l)
                    }
                };
                first_lines(text).into_iter().map(|l| paint(&l)).collect()
            }
            Detail::Code { .. } => Vec::new(),
            Detail::Json { value } => vec![self.style.dim(&clip(&value.to_string(), 200))],
        }
    }

    fn describe(&self, presentation: &CallPresentation) -> String {
        let remark = clip(presentation.remark.lines().next().unwrap_or_default(), 80);
        if remark.is_empty() {
            self.style.bold(&presentation.action)
        } else {
            format!("{} {}", self.style.bold(&presentation.action), remark)
        }
    }

    /// Writes lines above the live region, then draws the live region again.
    fn permanent(&mut self, lines: Vec<String>) {
        if lines.is_empty() {
            return;
        }
        self.clear_live();
        for line in lines {
            let _ = writeln!(self.out, "{line}");
        }
        self.draw_live();
    }

    fn redraw(&mut self) {
        self.clear_live();
        self.draw_live();
    }

    fn clear_live(&mut self) {
        if self.live_lines > 0 {
            let _ = write!(self.out, "\x1b[{}A\x1b[J", self.live_lines);
            self.live_lines = 0;
        }
    }

    fn draw_live(&mut self) {
        if !self.style.live {
            let _ = self.out.flush();
            return;
        }
        let frame = SPINNER[self.frame % SPINNER.len()];
        let mut lines = Vec::with_capacity(self.running.len());
        for running in &self.running {
            let seconds = running.started.elapsed().as_secs_f64();
            let mut line = format!(
                "{}{} {}  {}",
                indent(running.depth),
                self.style.cyan(frame),
                self.describe(&running.presentation),
                self.style.dim(&format!("{seconds:.1}s"))
            );
            if !running.last_output.is_empty() {
                line.push_str("  ");
                line.push_str(&self.style.dim(&clip(&running.last_output, 50)));
            }
            lines.push(line);
        }
        for line in &lines {
            let _ = writeln!(self.out, "{line}");
        }
        self.live_lines = lines.len();
        let _ = self.out.flush();
    }
}

fn indent(depth: usize) -> String {
    "  ".repeat(depth)
}

fn elapsed(ms: u64) -> String {
    if ms < 1000 {
        format!("{ms}ms")
    } else {
        format!("{:.1}s", ms as f64 / 1000.0)
    }
}

/// At most `limit` characters, with an ellipsis when cut.
fn clip(text: &str, limit: usize) -> String {
    let limit = limit.min(WIDTH);
    match text.char_indices().nth(limit) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

fn first_lines(text: &str) -> Vec<String> {
    let all: Vec<&str> = text.lines().collect();
    let mut lines: Vec<String> = all
        .iter()
        .take(DETAIL_LINES)
        .map(|l| clip(l, WIDTH))
        .collect();
    if all.len() > DETAIL_LINES {
        lines.push(format!("… {} more lines", all.len() - DETAIL_LINES));
    }
    lines
}

/// The first and last `keep` lines of an output, with a count of what is between.
fn head_and_tail(output: &str, keep: usize) -> Vec<String> {
    let all: Vec<&str> = output.lines().collect();
    if all.len() <= keep * 2 + 1 {
        return all.iter().map(|l| clip(l, WIDTH)).collect();
    }
    let mut lines: Vec<String> = all[..keep].iter().map(|l| clip(l, WIDTH)).collect();
    lines.push(format!("… {} lines …", all.len() - keep * 2));
    lines.extend(all[all.len() - keep..].iter().map(|l| clip(l, WIDTH)));
    lines
}

fn error_text(content: &[ContentBlock]) -> String {
    content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl Write for Captured {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn render(log: &str) -> String {
        let captured = Captured::default();
        let mut renderer = TerminalRenderer::new(Style::plain(), Box::new(captured.clone()));
        for line in log.lines().filter(|l| !l.trim().is_empty()) {
            let event: Event = serde_json::from_str(line).unwrap();
            renderer.handle(&event);
        }
        renderer.finish();
        let bytes = captured.0.lock().unwrap().clone();
        String::from_utf8(bytes).unwrap()
    }

    #[test]
    fn a_code_mode_turn_reads_as_a_nested_list() {
        let log = r#"
{"seq":1,"time":"2026-11-30T12:00:00.000Z","type":"turn.started","turnId":"t1","prompt":"go"}
{"seq":2,"time":"2026-11-30T12:00:00.000Z","type":"step.text.delta","turnId":"t1","step":1,"text":"Let me look.\n"}
{"seq":3,"time":"2026-11-30T12:00:00.000Z","type":"tool.start","callId":"c1","toolName":"run_code","caller":"direct","arguments":{},"presentation":{"action":"Run code","remark":"for f in files:"}}
{"seq":4,"time":"2026-11-30T12:00:00.000Z","type":"tool.start","callId":"c1.1","toolName":"grep","caller":"code","parentCallId":"c1","arguments":{},"presentation":{"action":"Search","remark":"TODO"}}
{"seq":5,"time":"2026-11-30T12:00:00.000Z","type":"tool.result","callId":"c1.1","toolName":"grep","caller":"code","parentCallId":"c1","status":"ok","content":[],"durationMs":4}
{"seq":6,"time":"2026-11-30T12:00:00.000Z","type":"tool.start","callId":"c1.2","toolName":"read","caller":"code","parentCallId":"c1","arguments":{},"presentation":{"action":"Read","remark":"missing.rs"}}
{"seq":7,"time":"2026-11-30T12:00:00.000Z","type":"tool.result","callId":"c1.2","toolName":"read","caller":"code","parentCallId":"c1","status":"error","errorCode":"TOOL_FAILED","content":[{"type":"text","text":"missing.rs does not exist"}],"durationMs":1}
{"seq":8,"time":"2026-11-30T12:00:00.000Z","type":"tool.result","callId":"c1","toolName":"run_code","caller":"direct","status":"ok","content":[],"durationMs":1500}
{"seq":9,"time":"2026-11-30T12:00:00.000Z","type":"tool.start","callId":"c2","toolName":"bash","caller":"direct","arguments":{},"presentation":{"action":"Run command","remark":"cargo test"}}
{"seq":10,"time":"2026-11-30T12:00:00.000Z","type":"tool.result","callId":"c2","toolName":"bash","caller":"direct","status":"ok","content":[],"detail":{"type":"shell","command":"cargo test","output":"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n","exitCode":101},"durationMs":20}
{"seq":11,"time":"2026-11-30T12:00:00.000Z","type":"tool.start","callId":"c3","toolName":"edit","caller":"direct","arguments":{},"presentation":{"action":"Edit","remark":"src/a.rs"}}
{"seq":12,"time":"2026-11-30T12:00:00.000Z","type":"tool.result","callId":"c3","toolName":"edit","caller":"direct","status":"ok","content":[],"detail":{"type":"diff","path":"src/a.rs","diff":"--- a/src/a.rs\n+++ b/src/a.rs\n@@ -1 +1 @@\n-old\n+new\n","added":1,"removed":1},"durationMs":2}
{"seq":13,"time":"2026-11-30T12:00:00.000Z","type":"step.text.delta","turnId":"t1","step":2,"text":"Done"}
{"seq":14,"time":"2026-11-30T12:00:00.000Z","type":"turn.finished","turnId":"t1","reason":"completed"}
"#;
        let expected = "\
Let me look.
▸ Run code for f in files:
  ✓ Search TODO  4ms
  ✗ Read missing.rs  1ms
    missing.rs does not exist
✓ Run code for f in files:  1.5s
✗ Run command cargo test  20ms
  1
  2
  3
  4
  5
  … 2 lines …
  8
  9
  10
  11
  12
  exit code 101
✓ Edit src/a.rs  2ms
  +1 −1 src/a.rs
  @@ -1 +1 @@
  -old
  +new
Done
";
        assert_eq!(render(log), expected);
    }

    #[test]
    fn an_interrupted_turn_says_so() {
        let log = r#"
{"seq":1,"time":"2026-11-30T12:00:00.000Z","type":"turn.started","turnId":"t1","prompt":"go"}
{"seq":2,"time":"2026-11-30T12:00:00.000Z","type":"tool.start","callId":"c1","toolName":"bash","caller":"direct","arguments":{},"presentation":{"action":"Run command","remark":"sleep 100"}}
{"seq":3,"time":"2026-11-30T12:00:00.000Z","type":"tool.result","callId":"c1","toolName":"bash","caller":"direct","status":"interrupted","errorCode":"INTERRUPTED","content":[{"type":"text","text":"The call was interrupted"}],"durationMs":300}
{"seq":4,"time":"2026-11-30T12:00:00.000Z","type":"turn.finished","turnId":"t1","reason":"interrupted"}
"#;
        assert_eq!(
            render(log),
            "■ Run command sleep 100  300ms\n  The call was interrupted\n■ interrupted\n"
        );
    }

    #[test]
    fn escape_sequences_from_the_model_and_tools_are_shown_not_executed() {
        let log = r#"
{"seq":1,"time":"2026-11-30T12:00:00.000Z","type":"turn.started","turnId":"t1","prompt":"go"}
{"seq":2,"time":"2026-11-30T12:00:00.000Z","type":"step.text.delta","turnId":"t1","step":1,"text":"Done\u001b]52;c;cm0gLXJmIH4=\u0007 \u001b[2J\n"}
{"seq":3,"time":"2026-11-30T12:00:00.000Z","type":"tool.start","callId":"c1","toolName":"bash","caller":"direct","arguments":{},"presentation":{"action":"Run command","remark":"echo \u001b]0;pwned\u0007"}}
{"seq":4,"time":"2026-11-30T12:00:00.000Z","type":"tool.result","callId":"c1","toolName":"bash","caller":"direct","status":"ok","content":[],"detail":{"type":"shell","command":"x","output":"ok\r\n\u001b[1A\u001b[Kforged line\r\n","exitCode":0},"durationMs":3}
{"seq":5,"time":"2026-11-30T12:00:00.000Z","type":"turn.finished","turnId":"t1","reason":"completed"}
"#;
        let shown = render(log);
        assert!(!shown.contains('\u{1b}'), "{shown:?}");
        assert!(!shown.contains('\u{7}'), "{shown:?}");
        assert_eq!(
            shown,
            "Done\\x1b]52;c;cm0gLXJmIH4=\\x07 \\x1b[2J\n\
             ✓ Run command echo \\x1b]0;pwned\\x07  3ms\n\
             \x20 ok\n\
             \x20 \\x1b[1A\\x1b[Kforged line\n"
        );
    }
}
