//! `file://` URIs from paths and back, and positions between Qilin's 1-based Unicode scalar
//! columns and the protocol's 0-based UTF-16 ones.

use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

/// The `file://` URI of an absolute path, percent-encoding what a URI path cannot hold.
pub fn path_to_uri(path: &Path) -> String {
    let mut uri = String::from("file://");
    for &byte in path.as_os_str().as_bytes() {
        if byte.is_ascii_alphanumeric() || b"/-._~".contains(&byte) {
            uri.push(char::from(byte));
        } else {
            uri.push_str(&format!("%{byte:02X}"));
        }
    }
    uri
}

/// The path of a `file://` URI; `None` for another scheme or a malformed escape.
pub fn uri_to_path(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    // `file://host/path` is not a local file; `file:///path` is.
    if !rest.starts_with('/') {
        return None;
    }
    let bytes = rest.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'%' {
            let hex = std::str::from_utf8(bytes.get(index + 1..index + 3)?).ok()?;
            decoded.push(u8::from_str_radix(hex, 16).ok()?);
            index += 3;
        } else {
            decoded.push(bytes[index]);
            index += 1;
        }
    }
    Some(PathBuf::from(std::ffi::OsString::from_vec(decoded)))
}

/// The UTF-16 offset of the 1-based scalar column `character` in `line` (past the end: the
/// line's end).
pub fn to_utf16(line: &str, character: u32) -> u32 {
    let scalars = character.saturating_sub(1) as usize;
    line.chars()
        .take(scalars)
        .map(|c| c.len_utf16() as u32)
        .sum::<u32>()
        + scalars.saturating_sub(line.chars().count()) as u32
}

/// The 1-based scalar column of the UTF-16 offset `offset` in `line`.
pub fn from_utf16(line: &str, offset: u32) -> u32 {
    let mut units = 0;
    let mut scalars = 0;
    for c in line.chars() {
        if units >= offset {
            break;
        }
        units += c.len_utf16() as u32;
        scalars += 1;
    }
    scalars + offset.saturating_sub(units) + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_round_trip_through_uris() {
        let path = Path::new("/w/my dir/ä#.py");
        let uri = path_to_uri(path);
        assert_eq!(uri, "file:///w/my%20dir/%C3%A4%23.py");
        assert_eq!(uri_to_path(&uri).unwrap(), path);
        assert_eq!(uri_to_path("untitled:1"), None);
    }

    #[test]
    fn columns_count_scalars_not_utf16_units() {
        let line = "a😀b = 1";
        // `b` is the third scalar; the emoji is two UTF-16 units.
        assert_eq!(to_utf16(line, 3), 3);
        assert_eq!(from_utf16(line, 3), 3);
        assert_eq!(to_utf16(line, 1), 0);
        assert_eq!(from_utf16(line, 0), 1);
        assert_eq!(from_utf16("", 4), 5);
    }
}
