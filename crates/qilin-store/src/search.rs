//! Full-text search over what sessions recorded: the text an event carries (a prompt, the
//! model's text of a step, a call's tool and arguments, its result or error, a person's answer)
//! is indexed with the event, in the same transaction, and [`EventStore::search`] finds it.
//!
//! The query is taken literally: it is split into words at white space, every word must occur
//! in a hit (as a phrase of its tokens: `retry-logic` finds "retry logic"), and hits where the
//! words occur together as one phrase rank first. No character is an operator, so quotes, `*`,
//! `NEAR(` or `-` cannot break a search. Chinese, Japanese and Korean text is indexed one
//! character a token, and a word of it matches as the phrase of its characters, so `重试` finds
//! "修改了重试逻辑" though nothing separates its words.
//!
//! [`EventStore::search`]: crate::EventStore::search

use crate::StoreError;
use crate::plan::decode;
use qilin_protocol::sessions::HitField;
use qilin_protocol::{CallStatus, ContentBlock, Event, EventBody, RequestResolution};
use serde_json::Value;

/// The longest query, in characters.
pub const MAX_QUERY_CHARS: usize = 1000;
/// The most words a query may have.
pub const MAX_QUERY_WORDS: usize = 32;
/// The most hits one page holds, whatever the query asks.
pub const MAX_SEARCH_PAGE: usize = 100;
/// The hits a page holds when the query names no limit.
pub const DEFAULT_SEARCH_PAGE: usize = 20;
/// The most characters of one event's text that are indexed; the rest is not searchable.
pub const MAX_INDEXED_CHARS: usize = 32 * 1024;
/// The tokens of context a snippet keeps before a match in a store that scans (memory).
const SNIPPET_CONTEXT_TOKENS: usize = 12;

/// What to search for and where (see the [module](self) notes on how words match).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SearchQuery {
    /// The words to find.
    pub text: String,
    /// Only these sessions (their ids); every session when empty.
    pub sessions: Vec<String>,
    /// Only sessions of this workspace (its absolute path).
    pub workspace: Option<String>,
    /// Only sessions of this agent (its name).
    pub agent: Option<String>,
    /// Only hits in calls of this tool.
    pub tool: Option<String>,
    /// Only hits in calls that ended so.
    pub status: Option<CallStatus>,
    /// Only events at or after this time: RFC 3339, or a date (midnight UTC).
    pub after: Option<String>,
    /// Only events before this time: RFC 3339, or a date (midnight UTC).
    pub before: Option<String>,
    /// The most hits on the page: 1 to [`MAX_SEARCH_PAGE`]; 0 for [`DEFAULT_SEARCH_PAGE`].
    pub limit: usize,
    /// The `next` of the previous page; the first page when `None`.
    pub cursor: Option<String>,
}

/// A query checked and turned into what a store searches with.
#[derive(Debug, Clone)]
pub(crate) struct PreparedSearch {
    /// The words, each with its CJK characters spaced apart, lower-case.
    pub words: Vec<String>,
    /// The sessions to search; every one when empty.
    pub sessions: Vec<String>,
    /// Only this workspace.
    pub workspace: Option<String>,
    /// Only this agent.
    pub agent: Option<String>,
    /// Only calls of this tool.
    pub tool: Option<String>,
    /// Only calls that ended so, by stored name.
    pub status: Option<&'static str>,
    /// Only events at or after this time, in the stored form.
    pub after: Option<String>,
    /// Only events before this time, in the stored form.
    pub before: Option<String>,
    /// The hits on the page.
    pub limit: usize,
    /// The hits of earlier pages, skipped.
    pub offset: usize,
}

impl PreparedSearch {
    /// Checks `query`: a clear [`StoreError::InvalidQuery`] for one that cannot be searched.
    pub(crate) fn new(query: &SearchQuery) -> Result<Self, StoreError> {
        let chars = query.text.chars().count();
        if chars > MAX_QUERY_CHARS {
            return Err(StoreError::InvalidQuery(format!(
                "the query is {chars} characters long; at most {MAX_QUERY_CHARS} are searched"
            )));
        }
        let nul = query
            .sessions
            .iter()
            .chain(&query.workspace)
            .chain(&query.agent)
            .chain(&query.tool)
            .chain(&query.after)
            .chain(&query.before)
            .find(|value| value.contains('\0'));
        if let Some(bad) = nul {
            return Err(StoreError::InvalidQuery(format!(
                "the filter `{}` holds a NUL character; give plain text",
                shorten(&bad.replace('\0', "\\0"), 40)
            )));
        }
        let words: Vec<String> = query
            .text
            .split(|c: char| c.is_whitespace() || c.is_control())
            .filter(|word| word.chars().any(char::is_alphanumeric))
            .map(|word| segment(&word.to_lowercase()))
            .collect();
        if words.is_empty() {
            return Err(StoreError::InvalidQuery(format!(
                "the query `{}` has no word to search for: give at least one word of letters or digits",
                shorten(&query.text, 40)
            )));
        }
        if words.len() > MAX_QUERY_WORDS {
            return Err(StoreError::InvalidQuery(format!(
                "the query has {} words; at most {MAX_QUERY_WORDS} are searched",
                words.len()
            )));
        }
        let limit = match query.limit {
            0 => DEFAULT_SEARCH_PAGE,
            limit => limit.min(MAX_SEARCH_PAGE),
        };
        let offset = query
            .cursor
            .as_deref()
            .map(|cursor| {
                cursor
                    .parse::<usize>()
                    .map_err(|_| StoreError::InvalidCursor(cursor.to_string()))
            })
            .transpose()?
            .unwrap_or(0);
        Ok(PreparedSearch {
            words,
            sessions: query.sessions.clone(),
            workspace: query.workspace.clone(),
            agent: query.agent.clone(),
            tool: query.tool.clone(),
            status: query.status.map(status_name),
            after: query
                .after
                .as_deref()
                .map(|t| stored_time("after", t))
                .transpose()?,
            before: query
                .before
                .as_deref()
                .map(|t| stored_time("before", t))
                .transpose()?,
            limit,
            offset,
        })
    }

    /// The words as one phrase, when there are several.
    pub(crate) fn phrase(&self) -> Option<String> {
        (self.words.len() > 1).then(|| self.words.join(" "))
    }

    /// The FTS5 query matching every word, each quoted as a string (nothing in it is syntax).
    pub(crate) fn fts_words(&self) -> String {
        self.words
            .iter()
            .map(|word| fts_string(word))
            .collect::<Vec<_>>()
            .join(" AND ")
    }

    /// Each word as its tokens joined by spaces (`client.rs` → `client rs`), for a store that
    /// indexes [`terms`].
    #[cfg(feature = "postgres")]
    pub(crate) fn term_words(&self) -> Vec<String> {
        self.words
            .iter()
            .map(|word| terms(word))
            .filter(|word| !word.is_empty())
            .collect()
    }

    /// The cursor of the page after one of `limit` hits at `offset`.
    pub(crate) fn next_cursor(&self) -> String {
        self.offset.saturating_add(self.limit).to_string()
    }
}

/// `text` as an FTS5 string: in double quotes, its own double quotes doubled.
pub(crate) fn fts_string(text: &str) -> String {
    format!("\"{}\"", text.replace('"', "\"\""))
}

/// A time a query names, in the form events store theirs (`2026-12-02T05:00:00.000Z`).
fn stored_time(which: &str, time: &str) -> Result<String, StoreError> {
    use chrono::{DateTime, NaiveDate, SecondsFormat, Utc};
    if let Ok(parsed) = DateTime::parse_from_rfc3339(time) {
        return Ok(parsed
            .with_timezone(&Utc)
            .to_rfc3339_opts(SecondsFormat::Millis, true));
    }
    if let Ok(date) = NaiveDate::parse_from_str(time, "%Y-%m-%d") {
        return Ok(date
            .and_time(chrono::NaiveTime::MIN)
            .and_utc()
            .to_rfc3339_opts(SecondsFormat::Millis, true));
    }
    Err(StoreError::InvalidQuery(format!(
        "`{which}` is `{}`: give an RFC 3339 time (2026-12-02T05:00:00Z) or a date (2026-12-02)",
        shorten(time, 40)
    )))
}

/// The stored name of a call status.
pub(crate) fn status_name(status: CallStatus) -> &'static str {
    match status {
        CallStatus::Ok => "ok",
        CallStatus::Error => "error",
        CallStatus::Denied => "denied",
        CallStatus::Interrupted => "interrupted",
    }
}

/// The first `chars` characters of `text`, with `…` when cut.
fn shorten(text: &str, chars: usize) -> String {
    match text.char_indices().nth(chars) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}

/// Whether `c` is written without spaces between words (Chinese, Japanese, Korean), so that
/// it is indexed as a token of its own.
pub(crate) fn is_cjk(c: char) -> bool {
    matches!(u32::from(c),
        0x1100..=0x11FF
        | 0x2E80..=0x2FDF
        | 0x3040..=0x30FF
        | 0x3100..=0x312F
        | 0x3130..=0x318F
        | 0x31A0..=0x31FF
        | 0x3400..=0x4DBF
        | 0x4E00..=0x9FFF
        | 0xAC00..=0xD7AF
        | 0xF900..=0xFAFF
        | 0x20000..=0x3134F)
}

/// `text` with a space between each CJK character and its neighbours, so every such
/// character is a token.
pub(crate) fn segment(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 2);
    let mut previous: Option<char> = None;
    for c in text.chars() {
        if let Some(before) = previous
            && (is_cjk(c) || is_cjk(before))
            && !c.is_whitespace()
            && !before.is_whitespace()
        {
            out.push(' ');
        }
        out.push(c);
        previous = Some(c);
    }
    out
}

/// A snippet of segmented text read back: the spaces [`segment`] put between CJK characters
/// taken out again (the match marks `«` `»` looked through), and marks that touch merged. A
/// space between a CJK character and another stays: it may have been written.
pub(crate) fn unsegment(snippet: &str) -> String {
    let chars: Vec<char> = snippet.chars().collect();
    let is_mark = |c: char| c == '«' || c == '»';
    let mut out = String::with_capacity(snippet.len());
    for (index, &c) in chars.iter().enumerate() {
        if c == ' ' {
            let before = chars[..index].iter().rev().find(|&&c| !is_mark(c));
            let after = chars[index + 1..].iter().find(|&&c| !is_mark(c));
            if let (Some(&before), Some(&after)) = (before, after)
                && is_cjk(before)
                && is_cjk(after)
            {
                continue;
            }
        }
        out.push(c);
    }
    // Characters marked one by one read as one mark.
    out.replace("»«", "")
}

/// The first [`MAX_INDEXED_CHARS`] characters of `text`, segmented: what the index keeps.
fn indexed(text: &str) -> String {
    let cut = match text.char_indices().nth(MAX_INDEXED_CHARS) {
        Some((end, _)) => &text[..end],
        None => text,
    };
    segment(cut)
}

/// One event's searchable text, before the store places it in its session.
#[derive(Debug, Clone)]
pub(crate) struct IndexDoc {
    /// The event's `seq` (a step's text: its first text event's).
    pub seq: i64,
    /// The turns the append had started when the event came (added to the session's turns
    /// before the append, it is the event's turn).
    pub turns_before: i64,
    /// The call it belongs to.
    pub call_id: Option<String>,
    /// Which part of the event it is.
    pub field: HitField,
    /// The event's time.
    pub time: String,
    /// The text, segmented and cut to [`MAX_INDEXED_CHARS`].
    pub body: String,
}

/// A call an append starts or ends: its tool, and its status once it ended.
#[derive(Debug, Clone)]
pub(crate) struct CallRow {
    /// The call's id.
    pub call_id: String,
    /// Its tool.
    pub tool: String,
    /// How it ended (stored name); `None` at its start.
    pub status: Option<&'static str>,
}

/// A step an append ends: its text is indexed from the step's text events, which earlier
/// appends may hold.
#[derive(Debug, Clone)]
pub(crate) struct StepEnd {
    /// The `seq` of its `step.finished`.
    pub seq: i64,
    /// As [`IndexDoc::turns_before`].
    pub turns_before: i64,
}

/// A step's start or a piece of its text, as an append brings it: a store that keeps the
/// text of the steps in progress builds a step's text from them, without reading it back.
#[derive(Debug, Clone)]
pub(crate) enum StepPiece {
    /// The step starts (`step.started`).
    Started,
    /// A piece of its text (`step.text.delta`), with the event's time.
    Text {
        /// The event's time.
        time: String,
        /// The text.
        text: String,
    },
}

/// What an append adds to the index.
#[derive(Debug, Clone, Default)]
pub(crate) struct IndexPlan {
    /// The text of its events.
    pub docs: Vec<IndexDoc>,
    /// The calls it starts and ends, in order.
    pub calls: Vec<CallRow>,
    /// The steps it ends.
    pub step_ends: Vec<StepEnd>,
    /// The steps it starts and the pieces of their text, each with its event's `seq`.
    pub step_pieces: Vec<(i64, StepPiece)>,
}

impl IndexPlan {
    /// Adds what `event` (with `seq` as stored) brings; `turns_before` counts the append's
    /// turns so far, this event's included.
    pub(crate) fn add(&mut self, seq: i64, event: &Event, turns_before: i64) {
        let mut docs = Vec::new();
        let mut doc = |field: HitField, call_id: Option<&str>, text: &str| {
            if text.trim().is_empty() {
                return;
            }
            docs.push(IndexDoc {
                seq,
                turns_before,
                call_id: call_id.map(str::to_string),
                field,
                time: event.time.clone(),
                body: indexed(text),
            });
        };
        match &event.body {
            EventBody::TurnStarted { prompt, .. } => doc(HitField::Prompt, None, prompt),
            EventBody::TurnFinished {
                message: Some(message),
                ..
            } => doc(HitField::Error, None, message),
            EventBody::ToolStart(start) => {
                let header = format!(
                    "{} {} {}",
                    start.tool_name, start.presentation.action, start.presentation.remark
                );
                doc(HitField::Tool, Some(&start.call_id), &header);
                doc(
                    HitField::Arguments,
                    Some(&start.call_id),
                    &value_text(&start.arguments),
                );
                self.calls.push(CallRow {
                    call_id: start.call_id.clone(),
                    tool: start.tool_name.clone(),
                    status: None,
                });
            }
            EventBody::ToolResult(result) => {
                let field = match result.status {
                    CallStatus::Ok => HitField::Result,
                    _ => HitField::Error,
                };
                doc(field, Some(&result.call_id), &content_text(&result.content));
                self.calls.push(CallRow {
                    call_id: result.call_id.clone(),
                    tool: result.tool_name.clone(),
                    status: Some(status_name(result.status)),
                });
            }
            EventBody::RequestResolved(resolved) => {
                let answer = match &resolved.resolution {
                    RequestResolution::Answered { answers } => answers
                        .iter()
                        .flat_map(|answer| answer.answer.iter().map(String::as_str))
                        .collect::<Vec<_>>()
                        .join("\n"),
                    RequestResolution::Denied {
                        reason: Some(reason),
                    } => reason.clone(),
                    _ => String::new(),
                };
                doc(HitField::Answer, Some(&resolved.call_id), &answer);
            }
            EventBody::StepStarted { .. } => self.step_pieces.push((seq, StepPiece::Started)),
            EventBody::StepTextDelta { text, .. } => self.step_pieces.push((
                seq,
                StepPiece::Text {
                    time: event.time.clone(),
                    text: text.clone(),
                },
            )),
            EventBody::StepFinished { .. } => self.step_ends.push(StepEnd { seq, turns_before }),
            _ => {}
        }
        self.docs.extend(docs);
    }
}

/// The text of a step, from its text events (`seq`, time, JSON) in order: one document at the
/// first one's `seq` and time; `None` when the step wrote no text.
pub(crate) fn step_doc(
    session: &str,
    end: &StepEnd,
    deltas: &[(i64, String, String)],
) -> Result<Option<IndexDoc>, StoreError> {
    let mut text = String::new();
    for (_, _, json) in deltas {
        let event: Event = decode(session, json)?;
        if let EventBody::StepTextDelta { text: delta, .. } = &event.body {
            push_step_text(&mut text, delta);
        }
    }
    let Some((seq, time, _)) = deltas.first() else {
        return Ok(None);
    };
    Ok(step_text_doc(end, *seq, time, &text))
}

/// Adds a piece of a step's text to `text`, unless it holds more than is indexed already.
pub(crate) fn push_step_text(text: &mut String, piece: &str) {
    // A character takes at most four bytes: past that many, the indexed characters are all in.
    if text.len() <= MAX_INDEXED_CHARS * 4 {
        text.push_str(piece);
    }
}

/// The document of a step's `text` (its pieces joined), at its first text event's `seq` and
/// time; `None` when the step wrote nothing but white space.
pub(crate) fn step_text_doc(end: &StepEnd, seq: i64, time: &str, text: &str) -> Option<IndexDoc> {
    (!text.trim().is_empty()).then(|| IndexDoc {
        seq,
        turns_before: end.turns_before,
        call_id: None,
        field: HitField::Text,
        time: time.to_string(),
        body: indexed(text),
    })
}

/// The turn of an event, from its session's turns before the append and the append's own
/// (`None` before the session's first turn).
pub(crate) fn turn_of(session_turns: i64, turns_before: i64) -> Option<u32> {
    let turn = session_turns + turns_before;
    (turn > 0).then(|| u32::try_from(turn).unwrap_or(u32::MAX))
}

/// The text of a JSON value: its strings, numbers and booleans, one a line (keys left out).
fn value_text(value: &Value) -> String {
    fn walk(value: &Value, out: &mut String) {
        match value {
            Value::Null => {}
            Value::String(text) => push_line(out, text),
            Value::Bool(_) | Value::Number(_) => push_line(out, &value.to_string()),
            Value::Array(items) => items.iter().for_each(|item| walk(item, out)),
            Value::Object(fields) => fields.values().for_each(|item| walk(item, out)),
        }
    }
    let mut out = String::new();
    walk(value, &mut out);
    out
}

fn push_line(out: &mut String, text: &str) {
    if out.len() > MAX_INDEXED_CHARS * 4 {
        return;
    }
    if !out.is_empty() {
        out.push('\n');
    }
    out.push_str(text);
}

/// The text of a result's content: its text blocks and JSON values (images left out).
fn content_text(content: &[ContentBlock]) -> String {
    let mut out = String::new();
    for block in content {
        match block {
            ContentBlock::Text { text } => push_line(&mut out, text),
            ContentBlock::Json { value } => push_line(&mut out, &value_text(value)),
            ContentBlock::Image { .. } => {}
        }
    }
    out
}

/// A score from a database's rank (`rank` ≥ 0, higher better) and whether the words occur as
/// one phrase: in [0, 2), an exact phrase always above its words apart.
pub(crate) fn score(rank: f64, exact: bool) -> f64 {
    let rank = if rank.is_finite() { rank.max(0.0) } else { 0.0 };
    rank / (1.0 + rank) + if exact { 1.0 } else { 0.0 }
}

/// The tokens of segmented text: runs of letters and digits, each CJK character alone, with
/// their byte ranges, lower-cased.
fn tokens(text: &str) -> Vec<(usize, usize, String)> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    for (index, c) in text.char_indices() {
        let in_word = c.is_alphanumeric() && !is_cjk(c);
        match (in_word, start) {
            (true, None) => start = Some(index),
            (false, Some(from)) => {
                out.push((from, index, text[from..index].to_lowercase()));
                start = None;
            }
            _ => {}
        }
        if is_cjk(c) {
            let end = index + c.len_utf8();
            out.push((index, end, text[index..end].to_lowercase()));
        }
    }
    if let Some(from) = start {
        out.push((from, text.len(), text[from..].to_lowercase()));
    }
    out
}

/// The tokens of `text` (see [`tokens`]) joined by spaces: what a store whose own parser splits
/// words otherwise (PostgreSQL reads `client.rs` as one host name) indexes, so that every store
/// finds the same words.
#[cfg(feature = "postgres")]
pub(crate) fn terms(text: &str) -> String {
    tokens(text)
        .into_iter()
        .map(|token| token.2)
        .collect::<Vec<_>>()
        .join(" ")
}

/// Where the phrase `needle` (tokens) occurs in `haystack`, by first token index.
fn occurrences(haystack: &[(usize, usize, String)], needle: &[String]) -> Vec<usize> {
    if needle.is_empty() || needle.len() > haystack.len() {
        return Vec::new();
    }
    (0..=haystack.len() - needle.len())
        .filter(|&at| {
            needle
                .iter()
                .zip(&haystack[at..])
                .all(|(word, token)| *word == token.2)
        })
        .collect()
}

/// How a text matches a query, for a store that scans (memory) or marks matches itself
/// (PostgreSQL): `None` when a word is missing, else the score and a snippet with each match
/// marked.
pub(crate) fn scan_match(search: &PreparedSearch, body: &str) -> Option<(f64, String)> {
    let haystack = tokens(body);
    let mut marked: Vec<(usize, usize)> = Vec::new();
    let mut count = 0usize;
    for word in &search.words {
        let needle: Vec<String> = tokens(word).into_iter().map(|t| t.2).collect();
        let found = occurrences(&haystack, &needle);
        if found.is_empty() {
            return None;
        }
        count += found.len();
        marked.extend(found.iter().map(|&at| (at, at + needle.len() - 1)));
    }
    let exact = search.phrase().is_some_and(|phrase| {
        let needle: Vec<String> = tokens(&phrase).into_iter().map(|t| t.2).collect();
        !occurrences(&haystack, &needle).is_empty()
    });
    marked.sort_unstable();
    let first = marked.first().map_or(0, |m| m.0);
    let from = first.saturating_sub(SNIPPET_CONTEXT_TOKENS);
    let to = (first + SNIPPET_CONTEXT_TOKENS * 2).min(haystack.len().saturating_sub(1));
    let mut snippet = String::new();
    if from > 0 {
        snippet.push('…');
    }
    let start_byte = match from {
        0 => 0,
        _ => haystack.get(from).map_or(0, |t| t.0),
    };
    let end_byte = match haystack.get(to + 1) {
        Some(_) => haystack.get(to).map_or(body.len(), |t| t.1),
        None => body.len(),
    };
    let mut cursor = start_byte;
    for &(first_token, last_token) in &marked {
        let (Some(open), Some(close)) = (haystack.get(first_token), haystack.get(last_token))
        else {
            continue;
        };
        if open.0 < cursor || close.1 > end_byte {
            continue;
        }
        snippet.push_str(&body[cursor..open.0]);
        snippet.push('«');
        snippet.push_str(&body[open.0..close.1]);
        snippet.push('»');
        cursor = close.1;
    }
    snippet.push_str(&body[cursor..end_byte]);
    if end_byte < body.len() {
        snippet.push('…');
    }
    let snippet = unsegment(&snippet.split_whitespace().collect::<Vec<_>>().join(" "));
    Some((score(count as f64, exact), snippet))
}

/// A document of a whole log with its turn, and its call's tool and status when in a call.
pub(crate) type LogDocument = (IndexDoc, Option<u32>, Option<CallRow>);

/// Every document of a whole log (with the steps' text), for a store that scans: each with its
/// turn, call and the call's tool and status.
pub(crate) fn log_documents(
    session: &str,
    events: &[Event],
) -> Result<Vec<LogDocument>, StoreError> {
    let mut plan = IndexPlan::default();
    let mut turns = 0i64;
    let mut step_started = 0usize;
    let mut steps = Vec::new();
    for (index, event) in events.iter().enumerate() {
        if matches!(event.body, EventBody::TurnStarted { .. }) {
            turns += 1;
        }
        if matches!(event.body, EventBody::StepStarted { .. }) {
            step_started = index;
        }
        let seq = i64::try_from(event.seq).unwrap_or(i64::MAX);
        plan.add(seq, event, turns);
        if matches!(event.body, EventBody::StepFinished { .. }) {
            let deltas = events[step_started..index]
                .iter()
                .filter(|e| matches!(e.body, EventBody::StepTextDelta { .. }))
                .map(|e| {
                    let json = crate::plan::encode(session, e)?;
                    Ok((
                        i64::try_from(e.seq).unwrap_or(i64::MAX),
                        e.time.clone(),
                        json,
                    ))
                })
                .collect::<Result<Vec<_>, StoreError>>()?;
            steps.push(deltas);
        }
    }
    let mut docs = plan.docs;
    for (end, deltas) in plan.step_ends.iter().zip(&steps) {
        docs.extend(step_doc(session, end, deltas)?);
    }
    let mut calls: std::collections::HashMap<String, CallRow> = std::collections::HashMap::new();
    for call in plan.calls {
        let entry = calls.entry(call.call_id.clone()).or_insert(call.clone());
        if call.status.is_some() {
            entry.status = call.status;
        }
    }
    Ok(docs
        .into_iter()
        .map(|doc| {
            let turn = turn_of(0, doc.turns_before);
            let call = doc.call_id.as_ref().and_then(|id| calls.get(id).cloned());
            (doc, turn, call)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cjk_text_is_spaced_and_snippets_are_joined_again() {
        assert_eq!(segment("修改了retry逻辑"), "修 改 了 retry 逻 辑");
        assert_eq!(unsegment("修 改 了 «retry» 逻 辑"), "修改了 «retry» 逻辑");
        assert_eq!(unsegment("«重 试» 逻 辑 and more"), "«重试»逻辑 and more");
        assert_eq!(unsegment("«重» «试» 逻"), "«重试»逻");
    }

    #[test]
    fn hostile_queries_are_words_or_clear_errors() {
        let query = |text: &str| SearchQuery {
            text: text.into(),
            ..SearchQuery::default()
        };
        let prepared = PreparedSearch::new(&query("\"retry\" NEAR( *")).unwrap();
        assert_eq!(prepared.fts_words(), "\"\"\"retry\"\"\" AND \"near(\"");
        assert!(matches!(
            PreparedSearch::new(&query("* ( \"")),
            Err(StoreError::InvalidQuery(_))
        ));
        assert!(matches!(
            PreparedSearch::new(&query(&"a".repeat(10 * 1024))),
            Err(StoreError::InvalidQuery(_))
        ));
        let bad_time = SearchQuery {
            after: Some("yesterday".into()),
            ..query("retry")
        };
        assert!(matches!(
            PreparedSearch::new(&bad_time),
            Err(StoreError::InvalidQuery(message)) if message.contains("RFC 3339")
        ));
    }

    #[test]
    fn dates_and_offsets_become_stored_times() {
        assert_eq!(
            stored_time("after", "2026-12-02").unwrap(),
            "2026-12-02T00:00:00.000Z"
        );
        assert_eq!(
            stored_time("after", "2026-12-02T07:00:00+02:00").unwrap(),
            "2026-12-02T05:00:00.000Z"
        );
    }
}
