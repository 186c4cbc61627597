//! Splitting a `SKILL.md` into its YAML front matter and its Markdown body.

/// A `SKILL.md` cut at its front matter delimiters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FrontMatter<'a> {
    /// The YAML between the `---` lines; it starts on line 2 of the file.
    pub yaml: &'a str,
    /// The Markdown after the closing `---` line.
    pub body: &'a str,
}

/// Why a file has no usable front matter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FrontMatterError {
    /// The file does not begin with a `---` line.
    Missing,
    /// The `---` on line 1 is never closed.
    Unclosed,
}

impl FrontMatterError {
    /// What is wrong and what is expected, for a diagnostic.
    pub fn message(&self) -> &'static str {
        match self {
            FrontMatterError::Missing => {
                "SKILL.md has no front matter: it must begin with a `---` line, then YAML with \
                 `name:` and `description:`, then a closing `---` line"
            }
            FrontMatterError::Unclosed => {
                "the front matter opened by `---` on line 1 is never closed: add a `---` line \
                 after the YAML"
            }
        }
    }

    /// The line the diagnostic points at.
    pub fn line(&self) -> usize {
        1
    }
}

/// Splits `text` into front matter and body.
pub(crate) fn split(text: &str) -> Result<FrontMatter<'_>, FrontMatterError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split_inclusive('\n');
    let first = lines.next().ok_or(FrontMatterError::Missing)?;
    if first.trim_end() != "---" {
        return Err(FrontMatterError::Missing);
    }
    let yaml_start = first.len();
    let mut offset = yaml_start;
    for line in lines {
        let delimiter = line.trim_end();
        if delimiter == "---" || delimiter == "..." {
            return Ok(FrontMatter {
                yaml: &text[yaml_start..offset],
                body: &text[offset + line.len()..],
            });
        }
        offset += line.len();
    }
    Err(FrontMatterError::Unclosed)
}

/// Front matter YAML with plain values that hold `: ` put in double quotes, and the keys
/// (with their lines in the YAML, from 1) whose values were quoted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct QuotedColons {
    /// The rewritten YAML; every line stays on its line, so locations still hold.
    pub yaml: String,
    /// Each quoted key and its line.
    pub keys: Vec<(String, usize)>,
}

/// The fallback for front matter that other clients' lenient parsers accept: a plain
/// (unquoted) value holding `: ` (`description: Use when: the user asks`) is not valid YAML.
/// Each such `key: value`, with the lines that continue it (more indented), is rewritten as
/// a double-quoted value — `"` and `\` escaped — which YAML folds the same way it would fold
/// the plain value. `None` when no value needs it.
pub(crate) fn quote_colon_values(yaml: &str) -> Option<QuotedColons> {
    let lines: Vec<&str> = yaml.lines().collect();
    let mut out: Vec<String> = Vec::with_capacity(lines.len());
    let mut keys = Vec::new();
    let mut index = 0;
    while index < lines.len() {
        let line = lines[index];
        let Some((key, indent, value_at)) = plain_colon_value(line) else {
            out.push(line.to_owned());
            index += 1;
            continue;
        };
        let mut last = index;
        for (next, continued) in lines.iter().enumerate().skip(index + 1) {
            let content = continued.trim_start();
            if content.is_empty() {
                continue;
            }
            if continued.len() - content.len() <= indent {
                break;
            }
            last = next;
        }
        let escape = |text: &str| text.replace('\\', "\\\\").replace('"', "\\\"");
        let mut quoted: Vec<String> = lines[index..=last]
            .iter()
            .enumerate()
            .map(|(offset, text)| {
                if offset == 0 {
                    format!(
                        "{}\"{}",
                        &text[..value_at],
                        escape(text[value_at..].trim_end())
                    )
                } else {
                    let content = text.trim_start();
                    format!(
                        "{}{}",
                        &text[..text.len() - content.len()],
                        escape(content.trim_end())
                    )
                }
            })
            .collect();
        if let Some(end) = quoted.last_mut() {
            end.push('"');
        }
        out.extend(quoted);
        keys.push((key.to_owned(), index + 1));
        index = last + 1;
    }
    if keys.is_empty() {
        return None;
    }
    let mut yaml_out = out.join("\n");
    yaml_out.push('\n');
    Some(QuotedColons {
        yaml: yaml_out,
        keys,
    })
}

/// For `  key: plain value with: a colon`, the key, its indentation and the byte where the
/// value starts; `None` for any other line (a quoted, block or flow value, or no `: ` in it).
fn plain_colon_value(line: &str) -> Option<(&str, usize, usize)> {
    let content = line.trim_start_matches(' ');
    let indent = line.len() - content.len();
    let key_len = content
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
        .filter(|&end| end > 0)?;
    let after_key = content[key_len..].strip_prefix(':')?;
    let value = after_key.trim_start_matches([' ', '\t']);
    if value.len() == after_key.len() || value.is_empty() {
        return None;
    }
    let value = value.trim_end();
    let starts_otherwise = value.starts_with([
        '"', '\'', '|', '>', '[', '{', '&', '*', '!', '%', '@', '`', '#',
    ]);
    if starts_otherwise || !(value.contains(": ") || value.ends_with(':')) {
        return None;
    }
    let value_at = line.len() - after_key.trim_start_matches([' ', '\t']).len();
    Some((&content[..key_len], indent, value_at))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_values_with_colons_are_quoted_in_place() {
        let yaml = "name: pdf\ndescription: Use when: the user asks about \"PDF\" forms\n  or C:\\temp: files\nlicense: MIT\nmetadata:\n  note: see: below\n";
        let quoted = quote_colon_values(yaml).expect("two values need quoting");
        assert_eq!(
            quoted.yaml,
            "name: pdf\ndescription: \"Use when: the user asks about \\\"PDF\\\" forms\n  or C:\\\\temp: files\"\nlicense: MIT\nmetadata:\n  note: \"see: below\"\n"
        );
        assert_eq!(
            quoted.keys,
            [("description".to_owned(), 2), ("note".to_owned(), 6)]
        );
        let value: serde_yaml_ng::Value = serde_yaml_ng::from_str(&quoted.yaml).unwrap();
        assert_eq!(
            value["description"],
            "Use when: the user asks about \"PDF\" forms or C:\\temp: files"
        );
        assert_eq!(value["metadata"]["note"], "see: below");
    }

    #[test]
    fn valid_yaml_and_other_value_styles_are_left_alone() {
        for yaml in [
            "name: a\ndescription: plain text, no colon\n",
            "description: \"quoted: fine\"\n",
            "description: 'single: fine'\n",
            "description: >\n  folded: fine\n",
            "url: http://example.com\n",
            "tools: [a, b]\n",
        ] {
            assert_eq!(quote_colon_values(yaml), None, "{yaml}");
        }
    }

    #[test]
    fn front_matter_and_body_are_cut_at_the_delimiters() {
        let cut = split("---\nname: a\n---\n# Body\n").unwrap();
        assert_eq!(cut.yaml, "name: a\n");
        assert_eq!(cut.body, "# Body\n");
        let crlf = split("\u{feff}---\r\nname: a\r\n---\r\nbody").unwrap();
        assert_eq!(crlf.yaml, "name: a\r\n");
        assert_eq!(crlf.body, "body");
    }

    #[test]
    fn missing_and_unclosed_front_matter_are_told_apart() {
        assert_eq!(split("# Title\n"), Err(FrontMatterError::Missing));
        assert_eq!(split(""), Err(FrontMatterError::Missing));
        assert_eq!(
            split("---\nname: a\n# no end\n"),
            Err(FrontMatterError::Unclosed)
        );
    }
}
