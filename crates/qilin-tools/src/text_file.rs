//! Loading a workspace file as text, and showing lines with their numbers.

use crate::workspace_path::WorkspacePath;
use qilin_tool::ToolError;
use std::path::Path;

/// Characters of one line shown at most; the rest is replaced by a note.
pub const MAX_LINE_CHARS: usize = 2000;

/// The largest file read as text; larger ones are refused with a pointer to `grep`.
const MAX_TEXT_FILE_BYTES: u64 = 256 * 1024 * 1024;

/// File extensions of the images `read_image` understands.
const IMAGE_EXTENSIONS: &[&str] = &["png", "jpg", "jpeg", "gif", "webp"];

/// Reads `path` as UTF-8 text, with an error for the model naming the path when it is missing
/// (with close names), a folder, binary or an image.
pub fn read_text(root: &Path, path: &WorkspacePath) -> Result<String, ToolError> {
    let size = std::fs::metadata(&path.absolute)
        .map_err(|err| read_error(root, path, err))?
        .len();
    if size > MAX_TEXT_FILE_BYTES {
        return Err(ToolError::invalid_arguments(format!(
            "`{}` is {size} bytes, too large to read whole (the limit is {MAX_TEXT_FILE_BYTES}); \
             find the part you need with `grep`, or use `bash` (`head`, `sed -n`)",
            path.relative
        )));
    }
    let bytes = std::fs::read(&path.absolute).map_err(|err| read_error(root, path, err))?;
    if looks_like_image(&path.absolute, &bytes) {
        return Err(ToolError::invalid_arguments(format!(
            "`{}` is an image; use the `read_image` tool to see it",
            path.relative
        )));
    }
    if bytes[..bytes.len().min(8192)].contains(&0) {
        return Err(ToolError::invalid_arguments(format!(
            "`{}` is a binary file ({} bytes) and cannot be shown as text; inspect it with \
             `bash` (e.g. `file`, `xxd | head`) if you need to",
            path.relative,
            bytes.len()
        )));
    }
    String::from_utf8(bytes).map_err(|err| {
        ToolError::invalid_arguments(format!(
            "`{}` is not UTF-8 text (invalid byte at offset {}); it may be binary or in another \
             encoding; inspect it with `bash` (e.g. `file`, `iconv`)",
            path.relative,
            err.utf8_error().valid_up_to()
        ))
    })
}

/// The error for a file that could not be read: missing (with close names), a folder, or
/// another I/O failure.
pub fn read_error(root: &Path, path: &WorkspacePath, err: std::io::Error) -> ToolError {
    if path.absolute.is_dir() {
        return ToolError::invalid_arguments(format!(
            "`{}` is a folder, not a file; use `glob` or `bash` (`ls`) to list it",
            path.relative
        ));
    }
    if err.kind() == std::io::ErrorKind::NotFound {
        let near = near_names(root, &path.absolute);
        let hint = if near.is_empty() {
            String::new()
        } else {
            format!("; did you mean {}?", near.join(" or "))
        };
        return ToolError::invalid_arguments(format!("`{}` does not exist{hint}", path.relative));
    }
    ToolError::failed(format!("`{}` could not be read: {err}", path.relative))
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

/// Up to three names close to the missing `path`: siblings in its folder (or the nearest
/// existing ancestor), relative to `root`.
fn near_names(root: &Path, missing: &Path) -> Vec<String> {
    let Some(wanted) = missing.file_name().and_then(|n| n.to_str()) else {
        return Vec::new();
    };
    let mut folder = missing.parent();
    while let Some(dir) = folder {
        if dir.is_dir() {
            break;
        }
        folder = dir.parent();
    }
    let Some(folder) = folder.filter(|f| f.starts_with(root)) else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(folder) else {
        return Vec::new();
    };
    let mut scored: Vec<(f64, String)> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name().to_str()?.to_string();
            let score = strsim::jaro_winkler(&wanted.to_lowercase(), &name.to_lowercase());
            (score > 0.7).then(|| {
                let relative = crate::workspace_path::relative_string(root, &folder.join(&name));
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
