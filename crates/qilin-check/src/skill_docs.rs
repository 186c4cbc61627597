//! A skill's files as the checker reads them: every text file, its Python examples (fenced
//! `python` blocks in its Markdown files) and the words its text names. A `.py` file is text
//! but not an example: a skill's scripts may be meant for CPython, not for `run_code`.

use crate::markdown;
use qilin_skill::{SKILL_FILE, Skill};
use std::collections::HashSet;
use std::path::PathBuf;

/// One Python example and where it sits: its line 1 is line `first_line` of `path`.
#[derive(Debug, Clone)]
pub struct Example {
    /// The file holding it.
    pub path: PathBuf,
    /// The line of `path` where the example's first line is, from 1.
    pub first_line: usize,
    /// The example's code.
    pub code: String,
    /// Whether its fence marks it for `run_code` (```` ```python run_code ````).
    pub marked_for_run_code: bool,
}

impl Example {
    /// The line of `path` for the example's line `line` (from 1).
    pub fn file_line(&self, line: usize) -> usize {
        self.first_line + line.saturating_sub(1)
    }
}

/// A skill's text and examples.
#[derive(Debug)]
pub struct SkillDocs {
    /// The Python examples, in file order.
    pub examples: Vec<Example>,
    /// Every identifier-like word of the skill's text (`head_limit`, `grep`).
    words: HashSet<String>,
    /// Every text file with its text, `SKILL.md` first.
    pub texts: Vec<(PathBuf, String)>,
}

impl SkillDocs {
    /// Reads the skill's `SKILL.md` (whole, so lines count from the file's first line)
    /// and every other file that is UTF-8 text; binary files are skipped.
    pub fn read(skill: &Skill) -> SkillDocs {
        let mut docs = SkillDocs {
            examples: Vec::new(),
            words: HashSet::new(),
            texts: Vec::new(),
        };
        let files = std::iter::once(SKILL_FILE.to_string()).chain(skill.files.iter().cloned());
        for relative in files {
            let path = skill.dir.join(&relative);
            let Some(text) = skill.source_text(&relative) else {
                continue;
            };
            docs.words.extend(words(&text).map(str::to_string));
            if relative.ends_with(".md") || relative.ends_with(".markdown") {
                for fence in markdown::fences(&text)
                    .into_iter()
                    .filter(|f| f.is_python())
                {
                    docs.examples.push(Example {
                        path: path.clone(),
                        first_line: fence.fence_line + 1,
                        marked_for_run_code: fence.is_marked_for_run_code(),
                        code: fence.code,
                    });
                }
            }
            docs.texts.push((path, text));
        }
        docs
    }

    /// True when the skill's text names `word` as a whole word.
    pub fn names(&self, word: &str) -> bool {
        self.words.contains(word)
    }
}

/// The identifier-like words of `text`: runs of letters, digits and `_`.
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|word| !word.is_empty())
}

#[cfg(test)]
mod tests {
    use super::words;

    #[test]
    fn words_are_whole_identifiers() {
        let found: Vec<&str> = words("`head_limit` (int): max; see `files[0].path`").collect();
        assert_eq!(
            found,
            vec!["head_limit", "int", "max", "see", "files", "0", "path"]
        );
    }
}
