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

#[cfg(test)]
mod tests {
    use super::*;

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
