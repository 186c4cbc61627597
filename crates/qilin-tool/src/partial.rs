//! The arguments of a call still being written, made whole enough to present: the JSON text
//! streamed so far closed (an open string ended, open objects and arrays closed, a half-written
//! member dropped), and the required fields still missing given a placeholder of their type,
//! so the tool can name the call ("Search TODO") before its arguments are complete.

use serde_json::{Map, Value};

/// How many of the last cut points (after `{`, `[`, a member or an element) are tried when the
/// text cannot be closed where it stops.
const CUTS_TRIED: usize = 4;

/// The arguments `text` (a JSON object's beginning) holds so far, completed for `schema`.
pub fn partial_arguments(text: &str, schema: &Value) -> Value {
    let value = match closed(text) {
        Some(Value::Object(fields)) => Value::Object(fields),
        _ => Value::Object(Map::new()),
    };
    with_required(value, schema)
}

/// The JSON value `text` begins, closed where it stops (or at an earlier cut point when that
/// does not parse); `None` when nothing of it parses.
fn closed(text: &str) -> Option<Value> {
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    let mut open: Vec<char> = Vec::new();
    let mut in_string = false;
    let mut escaped = false;
    // Places where the text can be cut and closed: (end, the brackets open there).
    let mut cuts: Vec<(usize, Vec<char>)> = Vec::new();
    for (at, c) in text.char_indices() {
        if in_string {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        match c {
            '"' => in_string = true,
            '{' | '[' => {
                open.push(c);
                cuts.push((at + 1, open.clone()));
            }
            '}' | ']' => {
                open.pop();
                cuts.push((at + 1, open.clone()));
            }
            ',' => cuts.push((at, open.clone())),
            _ => {}
        }
    }
    let mut whole = text.to_string();
    if in_string {
        if escaped {
            whole.pop();
        }
        whole.push('"');
    }
    if let Some(value) = close(&whole, &open) {
        return Some(value);
    }
    cuts.iter()
        .rev()
        .take(CUTS_TRIED)
        .find_map(|(end, open)| close(&text[..*end], open))
}

/// `text` with the brackets in `open` closed, parsed.
fn close(text: &str, open: &[char]) -> Option<Value> {
    let mut closed = text.to_string();
    for bracket in open.iter().rev() {
        closed.push(if *bracket == '{' { '}' } else { ']' });
    }
    serde_json::from_str(&closed).ok()
}

/// `value` with each required field of `schema` it lacks given a placeholder.
fn with_required(value: Value, schema: &Value) -> Value {
    let Value::Object(mut fields) = value else {
        return value;
    };
    let required = schema.get("required").and_then(Value::as_array);
    for name in required.into_iter().flatten().filter_map(Value::as_str) {
        if !fields.contains_key(name) {
            let property = &schema["properties"][name];
            fields.insert(name.to_string(), placeholder(property));
        }
    }
    Value::Object(fields)
}

/// The simplest value of the type `schema` describes: its first allowed value, an empty
/// string, zero, false, an empty list, an object of placeholders.
fn placeholder(schema: &Value) -> Value {
    if let Some(first) = schema.get("enum").and_then(|e| e.as_array()?.first()) {
        return first.clone();
    }
    let kind = match schema.get("type") {
        Some(Value::String(kind)) => kind.as_str(),
        Some(Value::Array(kinds)) => kinds
            .iter()
            .filter_map(Value::as_str)
            .find(|kind| *kind != "null")
            .unwrap_or("null"),
        _ => "null",
    };
    match kind {
        "string" => Value::String(String::new()),
        "integer" | "number" => Value::from(0),
        "boolean" => Value::Bool(false),
        "array" => Value::Array(Vec::new()),
        "object" => with_required(Value::Object(Map::new()), schema),
        _ => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn a_text_cut_anywhere_closes_to_what_it_holds() {
        assert_eq!(closed(r#"{"pattern":"TO"#), Some(json!({"pattern": "TO"})));
        assert_eq!(closed(r#"{"pat"#), Some(json!({})));
        assert_eq!(
            closed(r#"{"pattern":"TODO","#),
            Some(json!({"pattern": "TODO"}))
        );
        assert_eq!(
            closed(r#"{"pattern":"TODO","path"#),
            Some(json!({"pattern": "TODO"}))
        );
        assert_eq!(closed(r#"{"a":"x\"y\"#), Some(json!({"a": "x\"y"})));
        assert_eq!(
            closed(r#"{"todos":[{"id":"1","content":"wr"#),
            Some(json!({"todos": [{"id": "1", "content": "wr"}]}))
        );
        assert_eq!(closed(r#"{"n": 12"#), Some(json!({"n": 12})));
        assert_eq!(closed(r#"{"flag": tr"#), Some(json!({})));
        assert_eq!(closed(""), None);
    }

    #[test]
    fn missing_required_fields_get_placeholders_of_their_type() {
        let schema = json!({
            "type": "object",
            "required": ["command", "path", "count", "mode"],
            "properties": {
                "command": {"type": "string"},
                "path": {"type": ["string", "null"]},
                "count": {"type": "integer"},
                "mode": {"enum": ["view", "create"]},
                "optional": {"type": "string"}
            }
        });
        assert_eq!(
            partial_arguments(r#"{"command":"cargo te"#, &schema),
            json!({"command": "cargo te", "path": "", "count": 0, "mode": "view"})
        );
        assert_eq!(
            partial_arguments("[1, 2", &schema),
            json!({"command": "", "path": "", "count": 0, "mode": "view"})
        );
    }

    /// A JSON value of every kind (whole numbers only: a cut float may close to another
    /// spelling), strings of any characters, escapes included.
    fn any_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            proptest::collection::vec(any::<char>(), 0..8)
                .prop_map(|chars| Value::String(chars.into_iter().collect())),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                proptest::collection::btree_map("[a-z\"\\\\ ]{1,6}", inner, 0..4)
                    .prop_map(|fields| Value::Object(fields.into_iter().collect())),
            ]
        })
    }

    /// Whether `part` could be what `whole` is when cut: the same kind of value, a string or
    /// number a beginning of it, a list's elements and an object's members each a part of the
    /// whole's (the last element or some members not yet there).
    fn is_part_of(part: &Value, whole: &Value) -> bool {
        match (part, whole) {
            (Value::String(part), Value::String(whole)) => whole.starts_with(part.as_str()),
            (Value::Number(part), Value::Number(whole)) => {
                whole.to_string().starts_with(&part.to_string())
            }
            (Value::Array(part), Value::Array(whole)) => {
                part.len() <= whole.len() && part.iter().zip(whole).all(|(p, w)| is_part_of(p, w))
            }
            (Value::Object(part), Value::Object(whole)) => part
                .iter()
                .all(|(key, p)| whole.get(key).is_some_and(|w| is_part_of(p, w))),
            (part, whole) => part == whole,
        }
    }

    proptest! {
        #[test]
        fn every_beginning_of_an_object_closes_to_a_part_of_it(
            fields in proptest::collection::btree_map("[a-z_]{1,8}", any_json(), 0..5),
        ) {
            let whole = Value::Object(fields.into_iter().collect());
            let text = whole.to_string();
            prop_assert_eq!(closed(&text), Some(whole.clone()));
            for (end, _) in text.char_indices() {
                let beginning = &text[..end];
                if let Some(part) = closed(beginning) {
                    prop_assert!(
                        is_part_of(&part, &whole),
                        "{beginning:?} closed to {part}, which is not a part of {whole}"
                    );
                }
            }
        }

        #[test]
        fn the_arguments_so_far_always_hold_every_required_field(
            fields in proptest::collection::btree_map("[a-c]", any_json(), 0..3),
            cut in any::<proptest::sample::Index>(),
        ) {
            let schema = json!({
                "type": "object",
                "required": ["a", "b", "c"],
                "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
            });
            let text = Value::Object(fields.into_iter().collect()).to_string();
            let ends: Vec<usize> = text.char_indices().map(|(at, _)| at).collect();
            let beginning = &text[..ends[cut.index(ends.len())]];
            let arguments = partial_arguments(beginning, &schema);
            for name in ["a", "b", "c"] {
                prop_assert!(arguments.get(name).is_some(), "{name} missing from {arguments}");
            }
        }
    }
}
