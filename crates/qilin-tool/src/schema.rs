//! JSON Schemas of tool arguments and outputs, normalised so every provider accepts them.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};

/// `format` values providers understand; schemars' numeric ones (`uint32`, `double`) are
/// dropped because strict validators reject unknown formats.
const KNOWN_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uuid",
];

fn generate<T: JsonSchema>() -> Value {
    let generator = SchemaSettings::draft2020_12()
        .with(|settings| settings.inline_subschemas = true)
        .into_generator();
    generator.into_root_schema_for::<T>().to_value()
}

/// The parameter schema of a tool's argument type, as a provider receives it.
pub fn parameters_schema_for<T: JsonSchema>() -> Value {
    let mut schema = normalize_for_providers(generate::<T>());
    if let Value::Object(root) = &mut schema {
        root.entry("type").or_insert_with(|| "object".into());
        root.entry("properties")
            .or_insert_with(|| Value::Object(Map::new()));
    }
    schema
}

/// The schema of a tool's output type (for code-mode stubs and skill checks).
pub fn output_schema_for<T: JsonSchema>() -> Value {
    normalize_for_providers(generate::<T>())
}

/// Rewrites a schema into the subset OpenAI (strict mode too) and Gemini accept: `$ref`s
/// inlined from `$defs`, no `$schema`/`$defs`/`title`, `const` as a one-value `enum`, a
/// `oneOf` of constants folded into one `enum` whose description lists each value's meaning,
/// no `null` alternatives (an optional argument is left out, not sent as `null`), and only
/// well-known `format`s.
pub fn normalize_for_providers(schema: Value) -> Value {
    let defs = schema
        .get("$defs")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut out = inline_refs(schema, &defs, 0);
    if let Value::Object(root) = &mut out {
        root.remove("$schema");
        root.remove("$defs");
        root.remove("title");
    }
    simplify(&mut out);
    out
}

fn inline_refs(value: Value, defs: &Map<String, Value>, depth: usize) -> Value {
    match value {
        Value::Object(mut map) => {
            if let Some(Value::String(reference)) = map.get("$ref")
                && let Some(target) = reference
                    .strip_prefix("#/$defs/")
                    .and_then(|name| defs.get(name))
                && depth < 32
            {
                let mut inlined = match inline_refs(target.clone(), defs, depth + 1) {
                    Value::Object(inner) => inner,
                    other => return other,
                };
                map.remove("$ref");
                for (key, value) in map {
                    inlined.insert(key, inline_refs(value, defs, depth + 1));
                }
                return Value::Object(inlined);
            }
            Value::Object(
                map.into_iter()
                    .map(|(key, value)| (key, inline_refs(value, defs, depth)))
                    .collect(),
            )
        }
        Value::Array(items) => Value::Array(
            items
                .into_iter()
                .map(|item| inline_refs(item, defs, depth))
                .collect(),
        ),
        other => other,
    }
}

fn simplify(value: &mut Value) {
    match value {
        Value::Object(map) => {
            // The `title` keyword is text; an object under `title` is a property so named.
            if matches!(map.get("title"), Some(Value::String(_))) {
                map.remove("title");
            }
            if let Some(constant) = map.remove("const") {
                map.insert("enum".into(), Value::Array(vec![constant]));
            }
            if let Some(Value::String(format)) = map.get("format")
                && !KNOWN_FORMATS.contains(&format.as_str())
            {
                map.remove("format");
            }
            drop_null_alternatives(map);
            for child in map.values_mut() {
                simplify(child);
            }
            fold_constant_one_of(map);
        }
        Value::Array(items) => items.iter_mut().for_each(simplify),
        _ => {}
    }
}

/// `"type": ["string", "null"]` becomes `"type": "string"`; an `anyOf` with a `null` branch
/// loses it, and a single remaining branch is merged into the schema.
fn drop_null_alternatives(map: &mut Map<String, Value>) {
    if let Some(Value::Array(types)) = map.get_mut("type") {
        types.retain(|t| t != "null");
        if let [single] = types.as_slice() {
            let single = single.clone();
            map.insert("type".into(), single);
        }
    }
    let Some(Value::Array(branches)) = map.get_mut("anyOf") else {
        return;
    };
    branches.retain(|branch| branch.get("type").is_none_or(|t| t != "null"));
    if let [Value::Object(_)] = branches.as_slice()
        && let Some(Value::Array(mut branches)) = map.remove("anyOf")
        && let Some(Value::Object(branch)) = branches.pop()
    {
        for (key, value) in branch {
            map.entry(key).or_insert(value);
        }
    }
}

/// `{"oneOf": [{"enum": ["a"], "description": "..."}, ...]}` becomes one `enum`.
fn fold_constant_one_of(map: &mut Map<String, Value>) {
    let Some(Value::Array(variants)) = map.get("oneOf") else {
        return;
    };
    let mut values = Vec::new();
    let mut meanings = Vec::new();
    let mut kind: Option<Value> = None;
    for variant in variants {
        let Some(Value::Array(one)) = variant.get("enum") else {
            return;
        };
        let [constant] = one.as_slice() else {
            return;
        };
        if variant.as_object().is_some_and(|v| {
            v.keys()
                .any(|k| !matches!(k.as_str(), "enum" | "type" | "description"))
        }) {
            return;
        }
        kind = kind.or_else(|| variant.get("type").cloned());
        if let Some(Value::String(meaning)) = variant.get("description") {
            meanings.push(format!(
                "`{}`: {meaning}",
                constant.as_str().unwrap_or_default()
            ));
        }
        values.push(constant.clone());
    }
    map.remove("oneOf");
    if let Some(kind) = kind {
        map.insert("type".into(), kind);
    }
    map.insert("enum".into(), Value::Array(values));
    if !meanings.is_empty() {
        let listed = meanings.join("; ");
        let description = match map.get("description").and_then(Value::as_str) {
            Some(own) => format!("{own} ({listed})"),
            None => listed,
        };
        map.insert("description".into(), description.into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    /// How loudly to speak.
    #[derive(Deserialize, JsonSchema)]
    #[serde(rename_all = "snake_case")]
    #[allow(dead_code)]
    enum Volume {
        /// Barely audible.
        Quiet,
        /// As loud as possible.
        Loud,
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Inner {
        /// A count.
        count: u32,
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Args {
        /// The words.
        text: String,
        /// The volume.
        volume: Option<Volume>,
        /// Nested things.
        inner: Vec<Inner>,
    }

    #[test]
    fn the_provider_schema_is_flat_described_and_free_of_refs() {
        let schema = parameters_schema_for::<Args>();
        let text = schema.to_string();
        assert!(!text.contains("$ref") && !text.contains("$defs") && !text.contains("$schema"));
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["required"], json!(["text", "inner"]));
        assert_eq!(schema["properties"]["text"]["type"], "string");
        assert_eq!(
            schema["properties"]["volume"]["enum"],
            json!(["quiet", "loud"])
        );
        assert!(
            schema["properties"]["volume"]["description"]
                .as_str()
                .unwrap()
                .contains("`loud`: As loud as possible.")
        );
        let count = &schema["properties"]["inner"]["items"]["properties"]["count"];
        assert_eq!(count["description"], "A count.");
        assert!(count.get("format").is_none());
    }

    #[test]
    fn an_argument_type_without_fields_is_still_an_object() {
        #[derive(Deserialize, JsonSchema)]
        struct Empty {}
        let schema = parameters_schema_for::<Empty>();
        assert_eq!(schema["type"], "object");
        assert_eq!(schema["properties"], json!({}));
    }
}
