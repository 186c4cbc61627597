//! Splits a byte stream into whole UTF-8 text, holding back a character cut between chunks.

/// Turns byte chunks into text without splitting a multi-byte character across two pieces.
#[derive(Default)]
pub struct Utf8Chunks {
    pending: Vec<u8>,
}

impl Utf8Chunks {
    /// The text of `chunk` (and of any bytes held back from the previous one); invalid bytes
    /// become U+FFFD, an incomplete character at the end waits for the next chunk.
    pub fn push(&mut self, chunk: &[u8]) -> String {
        self.pending.extend_from_slice(chunk);
        let keep_from = match std::str::from_utf8(&self.pending) {
            Ok(_) => self.pending.len(),
            Err(err) if err.error_len().is_none() => err.valid_up_to(),
            Err(_) => self.pending.len(),
        };
        let rest = self.pending.split_off(keep_from);
        let text = String::from_utf8_lossy(&self.pending).into_owned();
        self.pending = rest;
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_character_split_across_chunks_comes_out_whole() {
        let bytes = "é€".as_bytes();
        let mut chunks = Utf8Chunks::default();
        assert_eq!(chunks.push(&bytes[..1]), "");
        assert_eq!(chunks.push(&bytes[1..3]), "é");
        assert_eq!(chunks.push(&bytes[3..]), "€");
        assert_eq!(chunks.push(b"\xffok"), "\u{fffd}ok");
    }
}
