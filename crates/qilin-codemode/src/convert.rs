//! Values across the sandbox boundary: JSON (tool arguments and outputs) ⇄ Monty objects.

use monty_types::{DictPairs, MontyObject};
use serde_json::{Map, Number, Value};

/// A JSON value as the Python value code mode sees: objects become dicts, arrays lists.
pub fn json_to_monty(value: &Value) -> MontyObject {
    match value {
        Value::Null => MontyObject::None,
        Value::Bool(b) => MontyObject::Bool(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => MontyObject::Int(i),
            None => MontyObject::Float(n.as_f64().unwrap_or(f64::NAN)),
        },
        Value::String(s) => MontyObject::String(s.clone()),
        Value::Array(items) => MontyObject::List(items.iter().map(json_to_monty).collect()),
        Value::Object(map) => MontyObject::Dict(
            map.iter()
                .map(|(k, v)| (MontyObject::String(k.clone()), json_to_monty(v)))
                .collect::<DictPairs>(),
        ),
    }
}

/// A Python value as JSON. Tuples and sets become arrays, dict keys strings, dataclass
/// instances objects; a value JSON cannot hold (bytes, a function) becomes its `repr`.
pub fn monty_to_json(object: &MontyObject) -> Value {
    match object {
        MontyObject::None => Value::Null,
        MontyObject::Bool(b) => Value::Bool(*b),
        MontyObject::Int(i) => Value::Number((*i).into()),
        MontyObject::BigInt(b) => b
            .to_string()
            .parse::<Number>()
            .map(Value::Number)
            .unwrap_or_else(|_| Value::String(b.to_string())),
        MontyObject::Float(f) => Number::from_f64(*f).map_or(Value::Null, Value::Number),
        MontyObject::String(s) => Value::String(s.clone()),
        MontyObject::List(items)
        | MontyObject::Tuple(items)
        | MontyObject::Set(items)
        | MontyObject::FrozenSet(items) => Value::Array(items.iter().map(monty_to_json).collect()),
        MontyObject::NamedTuple {
            field_names,
            values,
            ..
        } => Value::Object(
            field_names
                .iter()
                .cloned()
                .zip(values.iter().map(monty_to_json))
                .collect(),
        ),
        MontyObject::Dict(pairs) => Value::Object(
            pairs
                .into_iter()
                .map(|(k, v)| (key_text(k), monty_to_json(v)))
                .collect::<Map<_, _>>(),
        ),
        MontyObject::ClassInstance(instance) => Value::Object(
            (&instance.attrs)
                .into_iter()
                .map(|(k, v)| (key_text(k), monty_to_json(v)))
                .collect(),
        ),
        other => Value::String(other.py_repr()),
    }
}

fn key_text(key: &MontyObject) -> String {
    match key {
        MontyObject::String(s) => s.clone(),
        other => other.py_repr(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_survives_a_round_trip_through_python_values() {
        let value = json!({"a": [1, 2.5, "x", null, true], "b": {"c": -7}});
        assert_eq!(monty_to_json(&json_to_monty(&value)), value);
    }

    #[test]
    fn tuples_become_arrays_and_non_string_keys_their_repr() {
        let tuple = MontyObject::Tuple(vec![MontyObject::Int(1), MontyObject::None]);
        assert_eq!(monty_to_json(&tuple), json!([1, null]));
        let dict = MontyObject::Dict(
            vec![(MontyObject::Int(3), MontyObject::Bool(false))]
                .into_iter()
                .collect(),
        );
        assert_eq!(monty_to_json(&dict), json!({"3": false}));
    }
}
