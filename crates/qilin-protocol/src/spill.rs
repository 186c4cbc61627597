//! The notice that ends a model-visible output whose whole text was spilled to a file.
//!
//! One writer and one reader, so that every client (terminal, web, code mode) recognises a
//! spilled output the same way. [`SpillNotice`] is also the wire shape of a result that names its
//! spilled output (a check run's `spill`), `{path, totalBytes}`; in TypeScript it is
//! `SpilledOutput`, apart from the web client's own reader of the notice text.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// What a spill notice begins with, before the size.
pub(crate) const OPEN: &str = "[qilin: output cut; all ";
/// What stands between the size and the path.
pub(crate) const MIDDLE: &str = " bytes saved to ";
/// What a spill notice ends with, after the path.
pub(crate) const CLOSE: &str = " - read that file for the rest]";

/// What a spill notice says: where the whole output is and how large it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
#[ts(rename = "SpilledOutput")]
pub struct SpillNotice {
    /// Path of the file holding every byte of the output.
    pub path: String,
    /// Size of the whole output in bytes.
    #[ts(type = "number")]
    pub total_bytes: u64,
}

/// Writes the notice for an output of `total_bytes` bytes saved whole at `path`.
///
/// The notice is one line; callers put it on a line of its own at the end of the text.
pub fn spill_notice(path: &str, total_bytes: u64) -> String {
    format!("{OPEN}{total_bytes}{MIDDLE}{path}{CLOSE}")
}

/// Recognises a spill notice on the last non-empty line of `text`.
pub fn parse_spill_notice(text: &str) -> Option<SpillNotice> {
    let line = text.trim_end().lines().next_back()?;
    let rest = line.strip_prefix(OPEN)?.strip_suffix(CLOSE)?;
    let (total, path) = rest.split_once(MIDDLE)?;
    let total_bytes = total.parse().ok()?;
    if path.is_empty() {
        return None;
    }
    Some(SpillNotice {
        path: path.to_string(),
        total_bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_notice_is_recognised_at_the_end_of_an_output() {
        let text = format!(
            "head\n...\ntail\n{}\n",
            spill_notice("/data/s1/spill/call-7.txt", 123_456)
        );
        assert_eq!(
            parse_spill_notice(&text),
            Some(SpillNotice {
                path: "/data/s1/spill/call-7.txt".into(),
                total_bytes: 123_456
            })
        );
    }

    #[test]
    fn a_path_with_spaces_and_the_separator_words_survives() {
        let path = "/tmp/my dir/bytes saved to/x.txt";
        let notice = parse_spill_notice(&spill_notice(path, 9)).unwrap();
        assert_eq!(notice.path, path);
    }

    #[test]
    fn ordinary_text_or_a_notice_in_the_middle_is_not_a_spill() {
        assert_eq!(parse_spill_notice("all fine"), None);
        assert_eq!(parse_spill_notice(""), None);
        let middle = format!("{}\nmore output", spill_notice("/x", 3));
        assert_eq!(parse_spill_notice(&middle), None);
        assert_eq!(
            parse_spill_notice(
                "[qilin: output cut; all many bytes saved to /x - read that file for the rest]"
            ),
            None
        );
    }
}
