//! Fenced code blocks in Markdown (CommonMark fences: three or more backticks or tildes,
//! indented at most three spaces, closed by a fence of the same character at least as long).

/// One fenced block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fence {
    /// The first word of the info string, lowercased (`python`), empty when there is none.
    pub language: String,
    /// The whole info string after the fence, trimmed (`python run_code`).
    pub info: String,
    /// The line of the opening fence, from 1.
    pub fence_line: usize,
    /// The block's text, each line stripped of up to the opening fence's indentation.
    pub code: String,
}

impl Fence {
    /// True for a block of Python (`python`, `py`, `python3`).
    pub fn is_python(&self) -> bool {
        matches!(self.language.as_str(), "python" | "py" | "python3")
    }

    /// True when the info string marks the block as code for `run_code` with the word
    /// [`RUN_CODE_MARKER`] after the language: ```` ```python run_code ````.
    pub fn is_marked_for_run_code(&self) -> bool {
        self.info
            .split(|c: char| c.is_whitespace() || matches!(c, ',' | '{' | '}'))
            .skip(1)
            .any(|word| word == RUN_CODE_MARKER)
    }
}

/// The word that marks a fenced Python block as code for `run_code` (```` ```python run_code ````),
/// so `qilin check` holds it to Monty even when it makes no `sdk.tool.call`.
pub const RUN_CODE_MARKER: &str = "run_code";

struct Opening {
    marker: char,
    length: usize,
    indent: usize,
    language: String,
    info: String,
    line: usize,
}

fn opening(line: &str, number: usize) -> Option<Opening> {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = &line[indent..];
    let marker = rest.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let length = rest.chars().take_while(|c| *c == marker).count();
    if length < 3 {
        return None;
    }
    let info = rest[length..].trim();
    if marker == '`' && info.contains('`') {
        return None;
    }
    let language = info
        .split(|c: char| c.is_whitespace() || c == '{' || c == ',')
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    Some(Opening {
        marker,
        length,
        indent,
        language,
        info: info.to_owned(),
        line: number,
    })
}

fn closes(line: &str, open: &Opening) -> bool {
    let indent = line.len() - line.trim_start_matches(' ').len();
    if indent > 3 {
        return false;
    }
    let rest = line[indent..].trim_end();
    rest.len() >= open.length && rest.chars().all(|c| c == open.marker)
}

fn strip_indent(line: &str, indent: usize) -> &str {
    let spaces = line.len() - line.trim_start_matches(' ').len();
    &line[spaces.min(indent)..]
}

/// Every fenced block of `markdown`, in order. A block left open runs to the end of the text.
pub fn fences(markdown: &str) -> Vec<Fence> {
    let mut found = Vec::new();
    let mut open: Option<(Opening, Vec<&str>)> = None;
    for (index, line) in markdown.lines().enumerate() {
        let number = index + 1;
        match &mut open {
            None => {
                if let Some(start) = opening(line, number) {
                    open = Some((start, Vec::new()));
                }
            }
            Some((start, lines)) => {
                if closes(line, start) {
                    if let Some((start, lines)) = open.take() {
                        found.push(finish(start, &lines));
                    }
                } else {
                    lines.push(strip_indent(line, start.indent));
                }
            }
        }
    }
    if let Some((start, lines)) = open {
        found.push(finish(start, &lines));
    }
    found
}

/// Every line of `markdown`, or `None` for a line of a fenced block (its fences included), so
/// prose rules never read code as headings or labels.
pub(crate) fn outside_fences(markdown: &str) -> Vec<Option<&str>> {
    let mut open: Option<Opening> = None;
    markdown
        .lines()
        .enumerate()
        .map(|(index, line)| match &open {
            None => match opening(line, index + 1) {
                Some(start) => {
                    open = Some(start);
                    None
                }
                None => Some(line),
            },
            Some(start) => {
                if closes(line, start) {
                    open = None;
                }
                None
            }
        })
        .collect()
}

fn finish(start: Opening, lines: &[&str]) -> Fence {
    let mut code = lines.join("\n");
    code.push('\n');
    Fence {
        language: start.language,
        info: start.info,
        fence_line: start.line,
        code,
    }
}

#[cfg(test)]
mod tests {
    use super::fences;

    #[test]
    fn finds_python_blocks_with_their_lines() {
        let text = "# Title\n\n```python\nx = 1\n```\n\ntext\n\n  ~~~~ py title=x\n  y = 2\n  ```\n  ~~~~\n```\nopen\n";
        let found = fences(text);
        assert_eq!(found.len(), 3);
        assert_eq!(found[0].language, "python");
        assert_eq!(found[0].fence_line, 3);
        assert_eq!(found[0].code, "x = 1\n");
        assert!(found[1].is_python());
        assert_eq!(found[1].info, "py title=x");
        assert!(!found[1].is_marked_for_run_code());
        assert_eq!(found[1].fence_line, 9);
        assert_eq!(found[1].code, "y = 2\n```\n");
        assert_eq!(found[2].language, "");
        assert_eq!(found[2].code, "open\n");
        assert!(!found[2].is_python());
    }

    #[test]
    fn the_run_code_marker_follows_the_language() {
        let found = fences(
            "```python run_code\nx = 1\n```\n```python {run_code}\n```\n```run_code\n```\n```python\n# run_code\n```\n",
        );
        let marked: Vec<bool> = found.iter().map(|f| f.is_marked_for_run_code()).collect();
        assert_eq!(marked, [true, true, false, false]);
    }

    #[test]
    fn inline_code_and_short_fences_are_not_blocks() {
        assert!(fences("use ``x`` and `y`\n``python\nz\n``\n").is_empty());
        assert!(fences("    ```python\n    indented code\n    ```\n").is_empty());
    }
}
