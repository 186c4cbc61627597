//! Loading a workspace file as text, and showing lines with their numbers.

use qilin_tool::{PathKind, Resolved, ToolError};
use std::io::Read;
use std::path::Path;

/// Characters of one line shown at most; the rest is replaced by a note.
pub const MAX_LINE_CHARS: usize = 2000;

/// The largest file read as text; larger ones are refused with a pointer to `grep`.
pub const MAX_TEXT_FILE_BYTES: u64 = 256 * 1024 * 1024;

/// File extensions of the images `read_image` understands.
const IMAGE_EXTENSIONS: &[&str] = &["png", "jpg", "jpeg", "gif", "webp"];

/// Reads the regular file `path` whole, up to `limit` bytes, with an error for the model
/// naming the path when it is missing (with close names), a folder, not a regular file, or
/// larger than `limit` (`too_large` says what to do instead).
pub fn read_bytes(path: &Resolved, limit: u64, too_large: &str) -> Result<Vec<u8>, ToolError> {
    let mut file = path.open_file().map_err(|err| read_error(path, err))?;
    let size = file.metadata().map_err(|err| read_error(path, err))?.len();
    if size > limit {
        return Err(ToolError::invalid_arguments(format!(
            "`{}` is {size} bytes, too large to read whole (the limit is {limit}); {too_large}",
            path.relative()
        )));
    }
    let mut bytes = Vec::with_capacity(size as usize);
    (&mut file)
        .take(limit)
        .read_to_end(&mut bytes)
        .map_err(|err| read_error(path, err))?;
    Ok(bytes)
}

/// Reads `path` as UTF-8 text, with an error for the model naming the path when it is missing
/// (with close names), a folder, not a regular file, binary or an image.
pub fn read_text(path: &Resolved) -> Result<String, ToolError> {
    let bytes = read_bytes(
        path,
        MAX_TEXT_FILE_BYTES,
        "find the part you need with `grep`, or use `bash` (`head`, `sed -n`)",
    )?;
    let shown = path.relative();
    if looks_like_image(Path::new(shown), &bytes) {
        return Err(ToolError::invalid_arguments(format!(
            "`{shown}` is an image; use the `read_image` tool to see it"
        )));
    }
    if bytes[..bytes.len().min(8192)].contains(&0) {
        return Err(ToolError::invalid_arguments(format!(
            "`{shown}` is a binary file ({} bytes) and cannot be shown as text; inspect it with \
             `bash` (e.g. `file`, `xxd | head`) if you need to",
            bytes.len()
        )));
    }
    String::from_utf8(bytes).map_err(|err| {
        ToolError::invalid_arguments(format!(
            "`{shown}` is not UTF-8 text (invalid byte at offset {}); it may be binary or in \
             another encoding; inspect it with `bash` (e.g. `file`, `iconv`)",
            err.utf8_error().valid_up_to()
        ))
    })
}

/// The error for a path that could not be read as a file: missing (with close names), a
/// folder, not a regular file, or another I/O failure.
pub fn read_error(path: &Resolved, err: std::io::Error) -> ToolError {
    let shown = path.relative();
    match path.kind() {
        PathKind::Folder => ToolError::invalid_arguments(format!(
            "`{shown}` is a folder, not a file; use `glob` or `bash` (`ls`) to list it"
        )),
        PathKind::Missing => {
            let near = near_names(path);
            let hint = if near.is_empty() {
                String::new()
            } else {
                format!("; did you mean {}?", near.join(" or "))
            };
            ToolError::invalid_arguments(format!("`{shown}` does not exist{hint}"))
        }
        PathKind::Special => ToolError::invalid_arguments(format!(
            "`{shown}` is not a regular file (a FIFO, socket or device); the file tools only \
             read and write regular files"
        )),
        PathKind::File => ToolError::failed(format!("`{shown}` could not be read: {err}")),
    }
}

fn looks_like_image(path: &Path, bytes: &[u8]) -> bool {
    let by_extension = path
        .extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| IMAGE_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()));
    let by_magic = bytes.starts_with(b"\x89PNG")
        || bytes.starts_with(b"\xff\xd8\xff")
        || bytes.starts_with(b"GIF8")
        || (bytes.len() > 12 && &bytes[..4] == b"RIFF" && &bytes[8..12] == b"WEBP");
    by_magic || (by_extension && bytes.contains(&0))
}

/// Up to three names close to the missing `path`: entries of the nearest existing folder on
/// its way, relative to the workspace root.
fn near_names(path: &Resolved) -> Vec<String> {
    let Some(wanted) = path.relative().rsplit('/').next() else {
        return Vec::new();
    };
    let Ok(entries) = path.folder().entries() else {
        return Vec::new();
    };
    let folder = path.folder_relative();
    let mut scored: Vec<(f64, String)> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name().to_str()?.to_string();
            let score = strsim::jaro_winkler(&wanted.to_lowercase(), &name.to_lowercase());
            (score > 0.7).then(|| {
                let relative = if folder == "." {
                    name
                } else {
                    format!("{folder}/{name}")
                };
                (score, format!("`{relative}`"))
            })
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    scored.into_iter().take(3).map(|(_, name)| name).collect()
}

/// `line` cut to [`MAX_LINE_CHARS`] characters with a note, and whether it was cut.
pub fn cut_line(line: &str) -> (String, bool) {
    match line.char_indices().nth(MAX_LINE_CHARS) {
        None => (line.to_string(), false),
        Some((end, _)) => {
            let rest = line[end..].chars().count();
            (
                format!("{}... [line cut: {rest} more characters]", &line[..end]),
                true,
            )
        }
    }
}

/// Lines as `cat -n` shows them: the number right-aligned in six columns, a tab, the line.
pub fn numbered<'a>(lines: impl IntoIterator<Item = &'a str>, first_number: usize) -> String {
    let mut out = String::new();
    for (index, line) in lines.into_iter().enumerate() {
        out.push_str(&format!("{:>6}\t{line}\n", first_number + index));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lines_are_cut_with_a_note_and_lines_are_numbered() {
        let long = "x".repeat(MAX_LINE_CHARS + 5);
        let (cut, was_cut) = cut_line(&long);
        assert!(was_cut);
        assert!(cut.ends_with("[line cut: 5 more characters]"));
        assert_eq!(cut_line("short"), ("short".to_string(), false));
        assert_eq!(numbered(["a", "b"], 9), "     9\ta\n    10\tb\n");
    }
}
