//! Numbers in the cells of a table: reading them, comparing cells, and writing results that
//! stay integers when they can.

use qilin_tool::{ToolError, ToolResult};
use std::cmp::Ordering;

/// The most decimal places a sum is rounded back to (see [`round_to`]).
const MAX_ROUNDED_DECIMALS: u32 = 9;

/// A number read from a cell or computed from cells.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Num {
    /// A whole number written without a decimal point or exponent.
    Int(i64),
    /// Any other finite number.
    Float(f64),
}

impl Num {
    /// The number a cell holds, or `None` when it holds none (text, empty, `NaN`, infinite).
    pub fn parse(cell: &str) -> Option<Num> {
        if let Ok(int) = cell.parse::<i64>() {
            return Some(Num::Int(int));
        }
        let looks_numeric = cell
            .bytes()
            .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'-' | b'+' | b'e' | b'E'));
        match cell.parse::<f64>() {
            Ok(float) if looks_numeric && float.is_finite() => Some(Num::Float(float)),
            _ => None,
        }
    }

    /// The number as a float.
    pub fn as_f64(self) -> f64 {
        match self {
            Num::Int(int) => int as f64,
            Num::Float(float) => float,
        }
    }

    /// A total order: integers exactly, anything else as floats.
    pub fn total_cmp(self, other: Num) -> Ordering {
        match (self, other) {
            (Num::Int(a), Num::Int(b)) => a.cmp(&b),
            (a, b) => a.as_f64().total_cmp(&b.as_f64()),
        }
    }

    /// The number as JSON: an integer stays an integer.
    pub fn to_json(self) -> ToolResult<serde_json::Number> {
        match self {
            Num::Int(int) => Ok(int.into()),
            Num::Float(float) => serde_json::Number::from_f64(float).ok_or_else(|| {
                ToolError::failed("the aggregate is too large to represent as a number")
            }),
        }
    }
}

/// How many decimal places a numeric cell is written with; `None` in exponent notation.
pub fn decimals(cell: &str) -> Option<u32> {
    if cell.contains(['e', 'E']) {
        return None;
    }
    let places = cell
        .split_once('.')
        .map_or(0, |(_, fraction)| fraction.len());
    u32::try_from(places).ok()
}

/// `value` rounded to `places` decimals, so a sum of cells written with at most that many
/// (`1525.10 + 1212.20`) reads as its decimal result rather than with binary-float noise.
/// Left as it is beyond a few decimals.
pub fn round_to(value: f64, places: u32) -> f64 {
    if places > MAX_ROUNDED_DECIMALS {
        return value;
    }
    let scale = 10f64.powi(places as i32);
    let rounded = (value * scale).round() / scale;
    if rounded.is_finite() { rounded } else { value }
}

/// Compares a cell with a value: as numbers when both read as numbers, else as strings.
pub fn compare_cell(cell: &str, value: &str, value_number: Option<f64>) -> Ordering {
    match (Num::parse(cell), value_number) {
        (Some(number), Some(other)) => number.as_f64().total_cmp(&other),
        _ => cell.cmp(value),
    }
}

/// A total order on group cells: numbers numerically and before text, text as strings.
pub fn order_cells(a: &str, b: &str) -> Ordering {
    match (Num::parse(a), Num::parse(b)) {
        (Some(x), Some(y)) => x.total_cmp(y),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => a.cmp(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_read_as_integers_floats_or_nothing() {
        assert_eq!(Num::parse("42"), Some(Num::Int(42)));
        assert_eq!(Num::parse("-3"), Some(Num::Int(-3)));
        assert_eq!(Num::parse("1525.00"), Some(Num::Float(1525.0)));
        assert_eq!(Num::parse("1e3"), Some(Num::Float(1000.0)));
        for text in ["", "abc", "NaN", "inf", "infinity", "12 apples", "2025-01"] {
            assert_eq!(Num::parse(text), None, "{text}");
        }
    }

    #[test]
    fn decimals_and_rounding_keep_decimal_sums_clean() {
        assert_eq!(decimals("1525.10"), Some(2));
        assert_eq!(decimals("7"), Some(0));
        assert_eq!(decimals("1e3"), None);
        assert_eq!(round_to(0.1 + 0.2, 2), 0.3);
        assert_eq!(round_to(0.1 + 0.2, 20), 0.1 + 0.2);
    }

    #[test]
    fn cells_compare_as_numbers_only_when_both_sides_are_numbers() {
        assert_eq!(compare_cell("9", "10", Some(10.0)), Ordering::Less);
        assert_eq!(
            compare_cell("1525.00", "1525", Some(1525.0)),
            Ordering::Equal
        );
        assert_eq!(compare_cell("2025-03", "2025-02", None), Ordering::Greater);
        assert_eq!(compare_cell("abc", "10", Some(10.0)), "abc".cmp("10"));
    }

    #[test]
    fn group_order_is_total_with_numbers_first() {
        let mut cells = vec!["b", "10", "2", "a", "1a"];
        cells.sort_by(|a, b| order_cells(a, b));
        assert_eq!(cells, ["2", "10", "1a", "a", "b"]);
    }
}
