//! YAML reading with locations: errors and unknown keys name the line in the original file.

use crate::{Diagnostic, DiagnosticKind};
use qilin_tool::closest_names;
use serde::de::DeserializeOwned;
use std::path::Path;

/// One step of a path into a YAML document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Segment {
    /// A mapping key.
    Key(String),
    /// A sequence index, from 0.
    Index(usize),
}

/// The keys a mapping accepts, by its path (indices written `*`: `skills.preload.*`).
pub(crate) type KnownKeys = &'static [(&'static str, &'static [&'static str])];

/// Where a YAML text sits in its file: the file and how many lines come before the text.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Source<'a> {
    /// The file the text came from.
    pub path: &'a Path,
    /// The YAML text itself.
    pub text: &'a str,
    /// Lines of the file before the text (1 for front matter after its `---` line).
    pub line_offset: usize,
}

impl Source<'_> {
    /// The file line of a line in the text (both from 1).
    pub fn file_line(&self, text_line: usize) -> usize {
        text_line + self.line_offset
    }

    /// The file line where the value at `path` starts, or the nearest enclosing one found.
    pub fn line_of(&self, path: &[Segment]) -> Option<usize> {
        locate(self.text, path).map(|line| self.file_line(line))
    }

    /// Deserializes the text; keys the type does not read become warnings naming their line.
    pub fn parse<T: DeserializeOwned>(
        &self,
        known: KnownKeys,
    ) -> Result<(T, Vec<Diagnostic>), Diagnostic> {
        let mut ignored: Vec<Vec<Segment>> = Vec::new();
        let deserializer = serde_yaml_ng::Deserializer::from_str(self.text);
        let value: T = serde_ignored::deserialize(deserializer, |path| {
            ignored.push(segments(&path));
        })
        .map_err(|err| self.error_from(&err))?;
        let warnings = ignored
            .iter()
            .map(|path| self.unknown_key(path, known))
            .collect();
        Ok((value, warnings))
    }

    fn error_from(&self, err: &serde_yaml_ng::Error) -> Diagnostic {
        let mut message = err.to_string();
        if let Some(location) = err.location() {
            let suffix = format!(" at line {} column {}", location.line(), location.column());
            message = message.replacen(&suffix, "", 1);
        }
        let message = self.file_lines_in(&message);
        match err.location() {
            Some(location) => Diagnostic::error(
                DiagnosticKind::InvalidYaml,
                self.path,
                Some(self.file_line(location.line())),
                format!("{message} (column {})", location.column()),
            ),
            None => Diagnostic::error(DiagnosticKind::InvalidYaml, self.path, None, message),
        }
    }

    /// `message` with each ` at line N` the parser wrote (counting from the YAML text's first
    /// line) turned into the file's line.
    fn file_lines_in(&self, message: &str) -> String {
        const MARK: &str = " at line ";
        let mut out = String::with_capacity(message.len());
        let mut rest = message;
        while let Some(at) = rest.find(MARK) {
            let after = &rest[at + MARK.len()..];
            let digits = after.len() - after.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            out.push_str(&rest[..at + MARK.len()]);
            match after[..digits].parse::<usize>() {
                Ok(line) => out.push_str(&self.file_line(line).to_string()),
                Err(_) => out.push_str(&after[..digits]),
            }
            rest = &after[digits..];
        }
        out.push_str(rest);
        out
    }

    fn unknown_key(&self, path: &[Segment], known: KnownKeys) -> Diagnostic {
        let dotted = dotted(path);
        let parent = pattern(&path[..path.len().saturating_sub(1)]);
        let expected = known
            .iter()
            .find(|(at, _)| pattern_matches(at, &parent))
            .map(|(_, keys)| *keys)
            .unwrap_or_default();
        let key = match path.last() {
            Some(Segment::Key(key)) => key.as_str(),
            _ => dotted.as_str(),
        };
        let hint = match closest_names(key, expected.iter().copied(), 1).first() {
            Some(close) => format!("; did you mean `{close}`?"),
            None if expected.is_empty() => String::new(),
            None => format!(
                "; the keys read here are {}",
                expected
                    .iter()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        Diagnostic::warning(
            DiagnosticKind::UnknownKey,
            self.path,
            self.line_of(path),
            format!("unknown key `{dotted}` is ignored{hint}"),
        )
    }
}

fn segments(path: &serde_ignored::Path<'_>) -> Vec<Segment> {
    use serde_ignored::Path as P;
    match path {
        P::Root => Vec::new(),
        P::Seq { parent, index } => {
            let mut out = segments(parent);
            out.push(Segment::Index(*index));
            out
        }
        P::Map { parent, key } => {
            let mut out = segments(parent);
            out.push(Segment::Key(key.clone()));
            out
        }
        P::Some { parent } | P::NewtypeStruct { parent } | P::NewtypeVariant { parent } => {
            segments(parent)
        }
    }
}

/// `skills.preload.0.name`.
pub(crate) fn dotted(path: &[Segment]) -> String {
    path.iter()
        .map(|segment| match segment {
            Segment::Key(key) => key.clone(),
            Segment::Index(index) => index.to_string(),
        })
        .collect::<Vec<_>>()
        .join(".")
}

/// `skills.preload.*`: the path with indices as `*`, for looking up known keys.
fn pattern(path: &[Segment]) -> String {
    path.iter()
        .map(|segment| match segment {
            Segment::Key(key) => key.as_str(),
            Segment::Index(_) => "*",
        })
        .collect::<Vec<_>>()
        .join(".")
}

/// Whether a known-keys pattern (`mcp_servers.*`) matches a path's pattern: `*` stands for
/// any one segment, a mapping key as well as an index.
fn pattern_matches(known: &str, path: &str) -> bool {
    let known: Vec<&str> = known.split('.').collect();
    let path: Vec<&str> = path.split('.').collect();
    known.len() == path.len()
        && known
            .iter()
            .zip(&path)
            .all(|(want, got)| *want == "*" || want == got)
}

struct Line<'a> {
    number: usize,
    indent: usize,
    content: &'a str,
}

/// The line (from 1) where the value at `path` is written in block-style YAML; for a path
/// into flow style (`[a, b]`) or one not found, the line of the deepest enclosing key found.
fn locate(text: &str, path: &[Segment]) -> Option<usize> {
    let lines: Vec<Line> = text
        .lines()
        .enumerate()
        .filter_map(|(index, raw)| {
            let content = raw.trim_start();
            (!content.is_empty() && !content.starts_with('#')).then(|| Line {
                number: index + 1,
                indent: raw.len() - content.len(),
                content,
            })
        })
        .collect();
    let top_indent = lines.first().map_or(0, |line| line.indent);
    let mut start = 0;
    let mut end = lines.len();
    let mut parent_indent: Option<usize> = None;
    let mut found = None;
    for segment in path {
        let hit = match segment {
            Segment::Key(key) => (start..end).find_map(|i| {
                let (indent, rest) = strip_item_markers(&lines[i]);
                let inside = match parent_indent {
                    None => lines[i].indent == top_indent,
                    Some(p) => indent > p,
                };
                (inside && starts_with_key(rest, key)).then_some((i, indent))
            }),
            Segment::Index(index) => {
                let items: Vec<usize> = (start..end)
                    .filter(|&i| lines[i].content == "-" || lines[i].content.starts_with("- "))
                    .collect();
                let item_indent = items.first().map(|&i| lines[i].indent);
                items
                    .into_iter()
                    .filter(|&i| Some(lines[i].indent) == item_indent)
                    .nth(*index)
                    .map(|i| (i, lines[i].indent))
            }
        };
        let Some((i, indent)) = hit else { break };
        found = Some(lines[i].number);
        parent_indent = Some(indent);
        let block_indent = match segment {
            Segment::Key(_) => indent,
            Segment::Index(_) => lines[i].indent,
        };
        let ends_block = |line: &Line| match segment {
            Segment::Key(_) => {
                line.indent < block_indent
                    || (line.indent == block_indent && !line.content.starts_with('-'))
            }
            Segment::Index(_) => line.indent <= block_indent,
        };
        end = (i + 1..end).find(|&j| ends_block(&lines[j])).unwrap_or(end);
        start = match segment {
            Segment::Key(_) => i + 1,
            Segment::Index(_) => i,
        };
    }
    found
}

/// A line's content past any `- ` item markers, with the indent of that content.
fn strip_item_markers<'a>(line: &Line<'a>) -> (usize, &'a str) {
    let mut indent = line.indent;
    let mut rest = line.content;
    while let Some(after) = rest.strip_prefix("- ") {
        let trimmed = after.trim_start();
        indent += rest.len() - trimmed.len();
        rest = trimmed;
    }
    (indent, rest)
}

fn starts_with_key(content: &str, key: &str) -> bool {
    [
        format!("{key}:"),
        format!("\"{key}\":"),
        format!("'{key}':"),
    ]
    .iter()
    .any(|prefix| {
        content.starts_with(prefix.as_str())
            && content[prefix.len()..]
                .chars()
                .next()
                .is_none_or(char::is_whitespace)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(k: &str) -> Segment {
        Segment::Key(k.into())
    }

    #[test]
    fn nested_keys_and_items_are_found_on_their_lines() {
        let text = "name: a\nskills:\n  available: all\n  preload:\n    - name: x\n      files:\n        - SKILL.md\n    - name: y\n      files: [a.md]\ntools:\n- read\n- bash\n";
        assert_eq!(locate(text, &[key("name")]), Some(1));
        assert_eq!(locate(text, &[key("skills"), key("preload")]), Some(4));
        let second = [
            key("skills"),
            key("preload"),
            Segment::Index(1),
            key("name"),
        ];
        assert_eq!(locate(text, &second), Some(8));
        let file = [
            key("skills"),
            key("preload"),
            Segment::Index(0),
            key("files"),
            Segment::Index(0),
        ];
        assert_eq!(locate(text, &file), Some(7));
        assert_eq!(locate(text, &[key("tools"), Segment::Index(1)]), Some(12));
        let flow = [
            key("skills"),
            key("preload"),
            Segment::Index(1),
            key("files"),
            Segment::Index(0),
        ];
        assert_eq!(locate(text, &flow), Some(9));
    }

    #[test]
    fn a_key_inside_another_mapping_is_not_taken_for_a_top_level_one() {
        let text = "skills:\n  name: inner\nname: outer\n";
        assert_eq!(locate(text, &[key("name")]), Some(3));
    }
}
