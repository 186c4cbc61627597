//! An incremental reader of Server-Sent Events, as both providers stream them.

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SseEvent {
    /// The `event:` field; empty when the event had none.
    pub event: String,
    /// The `data:` lines joined with `\n`.
    pub data: String,
}

/// Splits a byte stream into events. Lines end with `\n` or `\r\n`; `:` lines are comments;
/// `id:` and `retry:` are ignored; an event is dispatched at a blank line if it has data.
#[derive(Debug, Default)]
pub(crate) struct SseParser {
    line: Vec<u8>,
    event: String,
    data: String,
    has_data: bool,
}

impl SseParser {
    /// Reads `bytes`, appending each completed event to `out`. Fails on a line that is not
    /// UTF-8, returning the line (lossily decoded).
    pub fn feed(&mut self, bytes: &[u8], out: &mut Vec<SseEvent>) -> Result<(), String> {
        for &byte in bytes {
            if byte == b'\n' {
                let mut line = std::mem::take(&mut self.line);
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                let text = match String::from_utf8(line) {
                    Ok(text) => text,
                    Err(err) => return Err(String::from_utf8_lossy(err.as_bytes()).into_owned()),
                };
                self.line_complete(&text, out);
            } else {
                self.line.push(byte);
            }
        }
        Ok(())
    }

    /// Ends the stream: an event whose lines all ended but whose blank line never came is
    /// dispatched; a partial last line is dropped.
    pub fn finish(&mut self, out: &mut Vec<SseEvent>) {
        self.line.clear();
        self.dispatch(out);
    }

    fn line_complete(&mut self, line: &str, out: &mut Vec<SseEvent>) {
        if line.is_empty() {
            self.dispatch(out);
            return;
        }
        if line.starts_with(':') {
            return;
        }
        let (field, value) = match line.split_once(':') {
            Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
            None => (line, ""),
        };
        match field {
            "event" => self.event = value.to_owned(),
            "data" => {
                if self.has_data {
                    self.data.push('\n');
                }
                self.data.push_str(value);
                self.has_data = true;
            }
            _ => {}
        }
    }

    fn dispatch(&mut self, out: &mut Vec<SseEvent>) {
        let event = std::mem::take(&mut self.event);
        let data = std::mem::take(&mut self.data);
        if std::mem::take(&mut self.has_data) {
            out.push(SseEvent { event, data });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn parse_in_pieces(input: &str, piece: usize) -> Vec<SseEvent> {
        let mut parser = SseParser::default();
        let mut out = Vec::new();
        for chunk in input.as_bytes().chunks(piece) {
            parser.feed(chunk, &mut out).expect("utf-8");
        }
        parser.finish(&mut out);
        out
    }

    #[test]
    fn events_are_the_same_however_the_bytes_are_split() {
        let input = "event: message_start\r\ndata: {\"a\":1}\r\n\r\n: keep-alive\n\ndata: x\ndata: y\n\nid: 7\nretry: 10\ndata:tight\n\n";
        let expected = vec![
            SseEvent {
                event: "message_start".into(),
                data: "{\"a\":1}".into(),
            },
            SseEvent {
                event: String::new(),
                data: "x\ny".into(),
            },
            SseEvent {
                event: String::new(),
                data: "tight".into(),
            },
        ];
        for piece in [1, 2, 3, 7, 1000] {
            assert_eq!(
                parse_in_pieces(input, piece),
                expected,
                "piece size {piece}"
            );
        }
    }

    #[test]
    fn the_end_dispatches_complete_lines_and_drops_a_partial_one() {
        assert_eq!(
            parse_in_pieces("data: [DONE]\n", 4),
            vec![SseEvent {
                event: String::new(),
                data: "[DONE]".into()
            }]
        );
        assert_eq!(parse_in_pieces("data: {\"cho", 4), vec![]);
    }

    #[test]
    fn a_line_that_is_not_utf8_is_an_error() {
        let mut parser = SseParser::default();
        let mut out = Vec::new();
        let err = parser.feed(b"data: \xff\xfe\n", &mut out).unwrap_err();
        assert!(err.starts_with("data: "), "{err}");
    }

    /// An event as a provider might write it: a comment before it perhaps, an `event:` line
    /// perhaps, its data lines, each line ended by `\n` or `\r\n`, then a blank line.
    fn written_event() -> impl Strategy<Value = (SseEvent, String)> {
        let name = proptest::option::of("[a-z_]{1,12}");
        let data_lines = proptest::collection::vec("[^\r\n]{0,16}", 1..4);
        let endings = proptest::collection::vec(any::<bool>(), 6);
        let comment = proptest::option::of("[^\r\n]{0,10}");
        (name, data_lines, endings, comment).prop_map(|(name, data_lines, endings, comment)| {
            let mut endings = endings.into_iter().cycle();
            let mut end = move || {
                if endings.next() == Some(true) {
                    "\r\n"
                } else {
                    "\n"
                }
            };
            let mut text = String::new();
            if let Some(comment) = comment {
                text.push_str(&format!(":{comment}{}", end()));
            }
            if let Some(name) = &name {
                text.push_str(&format!("event: {name}{}", end()));
            }
            for line in &data_lines {
                text.push_str(&format!("data: {line}{}", end()));
            }
            text.push_str(end());
            let event = SseEvent {
                event: name.unwrap_or_default(),
                data: data_lines.join("\n"),
            };
            (event, text)
        })
    }

    /// `bytes` fed in the pieces `cuts` (positions, taken modulo the length) makes, then ended.
    fn parse_cut_at(bytes: &[u8], cuts: &[usize]) -> (Vec<SseEvent>, Result<(), String>) {
        let mut positions: Vec<usize> = cuts.iter().map(|cut| cut % (bytes.len() + 1)).collect();
        positions.push(0);
        positions.push(bytes.len());
        positions.sort_unstable();
        let mut parser = SseParser::default();
        let mut out = Vec::new();
        for piece in positions.windows(2) {
            if let Err(line) = parser.feed(&bytes[piece[0]..piece[1]], &mut out) {
                return (out, Err(line));
            }
        }
        parser.finish(&mut out);
        (out, Ok(()))
    }

    proptest! {
        #[test]
        fn written_events_are_read_back_however_the_stream_is_cut(
            written in proptest::collection::vec(written_event(), 0..6),
            cuts in proptest::collection::vec(any::<usize>(), 0..12),
        ) {
            let text: String = written.iter().map(|(_, text)| text.as_str()).collect();
            let expected: Vec<SseEvent> = written.into_iter().map(|(event, _)| event).collect();
            let (events, result) = parse_cut_at(text.as_bytes(), &cuts);
            prop_assert_eq!(result, Ok(()));
            prop_assert_eq!(events, expected);
        }

        #[test]
        fn any_bytes_read_the_same_in_one_piece_or_many(
            bytes in proptest::collection::vec(
                prop_oneof![
                    4 => proptest::sample::select(b"data: event:x\r\n\n".to_vec()),
                    1 => any::<u8>(),
                ],
                0..200,
            ),
            cuts in proptest::collection::vec(any::<usize>(), 0..12),
        ) {
            prop_assert_eq!(parse_cut_at(&bytes, &cuts), parse_cut_at(&bytes, &[]));
        }
    }
}
