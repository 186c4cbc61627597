//! Python literals as JSON, for validating an example's arguments against a tool's schema.
//!
//! `str`, `int`, `float`, `True`/`False`/`None`, lists, tuples and dicts with string keys,
//! nested, convert as code mode converts them at run time. Anything else (a name, a call, an
//! f-string, a comprehension, a `**` spread) is not guessed: it becomes a placeholder whose
//! JSON pointer is listed in [`Literal::skipped`], so errors about it can be ignored.

use ruff_python_ast::{Expr, Number, UnaryOp};
use serde_json::{Map, Number as JsonNumber, Value};

/// A converted expression: its JSON value and the pointers of the parts that were not
/// literals (each holds `null` in the value).
#[derive(Debug, Clone, PartialEq)]
pub struct Literal {
    /// The value, with `null` at each skipped part.
    pub value: Value,
    /// JSON pointers (`/options/mode`) of the parts that were not literals.
    pub skipped: Vec<String>,
}

impl Literal {
    /// True when the error at `pointer` is about a part that was not a literal (or inside
    /// one), so nothing can be said about it.
    pub fn is_skipped(&self, pointer: &str) -> bool {
        self.skipped.iter().any(|skipped| {
            pointer == skipped
                || (pointer.starts_with(skipped.as_str())
                    && pointer[skipped.len()..].starts_with('/'))
        })
    }
}

/// Converts `expr`; `None` when the expression as a whole is not a literal.
pub fn to_json(expr: &Expr) -> Option<Literal> {
    let mut skipped = Vec::new();
    let value = convert(expr, "", &mut skipped);
    if skipped.iter().any(String::is_empty) {
        return None;
    }
    Some(Literal { value, skipped })
}

/// Converts keyword arguments (`pattern="x", path=p`) into one JSON object; a keyword whose
/// value is not a literal is skipped.
pub fn keywords_to_json<'a>(pairs: impl IntoIterator<Item = (&'a str, &'a Expr)>) -> Literal {
    let mut skipped = Vec::new();
    let mut object = Map::new();
    for (key, value) in pairs {
        let pointer = format!("/{}", escape(key));
        object.insert(key.to_string(), convert(value, &pointer, &mut skipped));
    }
    Literal {
        value: Value::Object(object),
        skipped,
    }
}

fn escape(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

fn skip(pointer: &str, skipped: &mut Vec<String>) -> Value {
    skipped.push(pointer.to_string());
    Value::Null
}

fn number(value: &Number, negate: bool, pointer: &str, skipped: &mut Vec<String>) -> Value {
    match value {
        Number::Int(int) => match int.as_i64() {
            Some(int) if negate => int
                .checked_neg()
                .map_or_else(|| skip(pointer, skipped), Value::from),
            Some(int) => Value::from(int),
            None => skip(pointer, skipped),
        },
        Number::Float(float) => {
            let float = if negate { -*float } else { *float };
            JsonNumber::from_f64(float).map_or_else(|| skip(pointer, skipped), Value::Number)
        }
        Number::Complex { .. } => skip(pointer, skipped),
    }
}

fn convert(expr: &Expr, pointer: &str, skipped: &mut Vec<String>) -> Value {
    match expr {
        Expr::StringLiteral(string) => Value::String(string.value.to_str().to_string()),
        Expr::NumberLiteral(literal) => number(&literal.value, false, pointer, skipped),
        Expr::UnaryOp(unary) => match (unary.op, unary.operand.as_ref()) {
            (UnaryOp::USub, Expr::NumberLiteral(literal)) => {
                number(&literal.value, true, pointer, skipped)
            }
            (UnaryOp::UAdd, Expr::NumberLiteral(literal)) => {
                number(&literal.value, false, pointer, skipped)
            }
            _ => skip(pointer, skipped),
        },
        Expr::BooleanLiteral(literal) => Value::Bool(literal.value),
        Expr::NoneLiteral(_) => Value::Null,
        Expr::List(list) => sequence(&list.elts, pointer, skipped),
        Expr::Tuple(tuple) => sequence(&tuple.elts, pointer, skipped),
        Expr::Dict(dict) => {
            let mut object = Map::new();
            for item in &dict.items {
                let Some(Expr::StringLiteral(key)) = &item.key else {
                    return skip(pointer, skipped);
                };
                let key = key.value.to_str();
                let child = format!("{pointer}/{}", escape(key));
                skipped.retain(|s| s != &child && !s.starts_with(&format!("{child}/")));
                object.insert(key.to_string(), convert(&item.value, &child, skipped));
            }
            Value::Object(object)
        }
        _ => skip(pointer, skipped),
    }
}

fn sequence(items: &[Expr], pointer: &str, skipped: &mut Vec<String>) -> Value {
    if items.iter().any(|item| matches!(item, Expr::Starred(_))) {
        return skip(pointer, skipped);
    }
    Value::Array(
        items
            .iter()
            .enumerate()
            .map(|(index, item)| convert(item, &format!("{pointer}/{index}"), skipped))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::{Literal, to_json};
    use ruff_python_ast::Stmt;
    use serde_json::json;

    fn literal(source: &str) -> Option<Literal> {
        let parsed = ruff_python_parser::parse_module(source).expect("the test source parses");
        let Some(Stmt::Expr(statement)) = parsed.syntax().body.first() else {
            panic!("the test source is one expression");
        };
        to_json(&statement.value)
    }

    #[test]
    fn python_literals_become_json() {
        let found = literal(
            r#"{"a": "x" "y", "b": -3, "c": 2.5, "d": [True, None, (1, r"\d")], "e": {"f": False}}"#,
        )
        .expect("a literal");
        assert_eq!(
            found.value,
            json!({"a": "xy", "b": -3, "c": 2.5, "d": [true, null, [1, "\\d"]], "e": {"f": false}})
        );
        assert!(found.skipped.is_empty());
    }

    #[test]
    fn non_literals_are_skipped_not_guessed() {
        let found = literal(r#"{"a": name, "b": f"x{y}", "c": [1, g()], "d": {**rest}, "e": 1}"#)
            .expect("the dict itself is a literal");
        assert_eq!(
            found.value,
            json!({"a": null, "b": null, "c": [1, null], "d": null, "e": 1})
        );
        assert_eq!(found.skipped, vec!["/a", "/b", "/c/1", "/d"]);
        assert!(found.is_skipped("/c/1"));
        assert!(found.is_skipped("/d/x"));
        assert!(!found.is_skipped("/c"));
        assert!(!found.is_skipped("/e"));
        assert!(literal("args").is_none());
        assert!(literal("{**rest}").is_none());
        assert!(literal("[x for x in y]").is_none());
        assert!(literal("{1: 'a'}").is_none());
        assert!(literal("10**400").is_none());
    }
}
