//! The engine behind `table_query`: one streaming pass over a CSV file that keeps the rows
//! meeting every filter and folds each group's cells into its aggregate.

use crate::table_number::{Num, compare_cell, decimals, order_cells, round_to};
use crate::table_query::{Aggregate, Filter, FilterOp, FilterValue, MAX_GROUPS, OrderBy, Scalar};
use qilin_tool::{ToolError, ToolResult, closest_names};
use std::cmp::Ordering;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering as AtomicOrdering};

/// Rows read between two looks at the stop flag.
const STOP_CHECK_ROWS: u64 = 4096;

/// What to compute over which file.
pub struct ScanRequest {
    /// The file as the model named it.
    pub path: String,
    /// How cells are combined.
    pub aggregate: Aggregate,
    /// The aggregated column (absent only for `count`).
    pub column: Option<String>,
    /// The grouped columns, in order.
    pub group_by: Vec<String>,
    /// Conditions every counted row meets.
    pub filters: Vec<Filter>,
}

/// One group's cells and aggregate.
pub struct GroupValue {
    /// The group's cell in each grouped column, in `group_by` order.
    pub key: Vec<String>,
    /// The aggregate over the group's rows.
    pub value: Num,
}

/// What one pass found.
pub struct Scan {
    /// Every group, unordered until [`Scan::sort`].
    pub groups: Vec<GroupValue>,
    /// The aggregate over every matching row; `None` for `avg`, `min` and `max` of no rows.
    pub total: Option<Num>,
    /// Rows meeting every filter.
    pub matched_rows: u64,
}

impl Scan {
    /// Puts the groups in `order`; ties on the value are broken by the group cells.
    pub fn sort(&mut self, order: OrderBy) {
        let by_key = |a: &GroupValue, b: &GroupValue| {
            a.key
                .iter()
                .zip(&b.key)
                .map(|(x, y)| order_cells(x, y))
                .find(|o| o.is_ne())
                .unwrap_or(Ordering::Equal)
        };
        match order {
            OrderBy::Group => self.groups.sort_by(by_key),
            OrderBy::ValueAsc => self
                .groups
                .sort_by(|a, b| a.value.total_cmp(b.value).then_with(|| by_key(a, b))),
            OrderBy::ValueDesc => self
                .groups
                .sort_by(|a, b| b.value.total_cmp(a.value).then_with(|| by_key(a, b))),
        }
    }
}

/// Reads `file` (shown as `shown`, relative to the workspace) once and aggregates it; stops
/// with an error when `stop` is set.
pub fn scan(
    request: &ScanRequest,
    file: std::fs::File,
    shown: &str,
    stop: &AtomicBool,
) -> ToolResult<Scan> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .trim(csv::Trim::All)
        .from_reader(std::io::BufReader::new(file));
    let header = reader
        .headers()
        .map_err(|err| malformed(shown, &err))?
        .clone();
    if header.iter().all(str::is_empty) {
        return Err(ToolError::failed(format!(
            "`{shown}` has no header row; `table_query` needs a first row naming the columns"
        )));
    }
    let columns: Vec<&str> = header.iter().collect();
    let column = request
        .column
        .as_deref()
        .map(|name| column_index(&columns, name, "column", shown))
        .transpose()?;
    let grouped = request
        .group_by
        .iter()
        .map(|name| column_index(&columns, name, "group_by", shown))
        .collect::<ToolResult<Vec<_>>>()?;
    let conditions = request
        .filters
        .iter()
        .enumerate()
        .map(|(index, filter)| Condition::new(filter, index, &columns, shown))
        .collect::<ToolResult<Vec<_>>>()?;

    let mut groups: HashMap<Vec<String>, Fold> = HashMap::new();
    let mut total = Fold::default();
    let mut key = vec![String::new(); grouped.len()];
    let mut record = csv::StringRecord::new();
    let mut matched_rows = 0u64;
    let mut rows_read = 0u64;
    while reader
        .read_record(&mut record)
        .map_err(|err| malformed(shown, &err))?
    {
        rows_read += 1;
        if rows_read.is_multiple_of(STOP_CHECK_ROWS) && stop.load(AtomicOrdering::Relaxed) {
            return Err(ToolError::failed(format!(
                "the query of `{shown}` was stopped"
            )));
        }
        if !conditions.iter().all(|c| c.holds(&record)) {
            continue;
        }
        matched_rows += 1;
        let line = record.position().map_or(0, csv::Position::line);
        let cell = Cell::of(&record, column, request, shown, line)?;
        for (slot, &index) in key.iter_mut().zip(&grouped) {
            slot.clear();
            slot.push_str(&record[index]);
        }
        let fold = match groups.get_mut(&key) {
            Some(fold) => fold,
            None => {
                if groups.len() == MAX_GROUPS {
                    return Err(too_many_groups(shown));
                }
                groups.entry(key.clone()).or_default()
            }
        };
        fold.add(cell);
        total.add(cell);
    }
    let aggregate = request.aggregate;
    Ok(Scan {
        groups: groups
            .into_iter()
            .filter_map(|(key, fold)| {
                fold.result(aggregate)
                    .map(|value| GroupValue { key, value })
            })
            .collect(),
        total: total.result(aggregate),
        matched_rows,
    })
}

/// What one matching row adds to an aggregate.
#[derive(Clone, Copy)]
enum Cell {
    /// A row counted by `count`: any row without a column, a non-empty cell with one.
    Counted,
    /// An empty cell under `count` with a column: not counted.
    Blank,
    /// A number and its decimal places (`None` in exponent notation).
    Number(Num, Option<u32>),
}

impl Cell {
    /// What the row `record` (at `line`) adds, or an error for a cell that must be a number
    /// and is not.
    fn of(
        record: &csv::StringRecord,
        column: Option<usize>,
        request: &ScanRequest,
        shown: &str,
        line: u64,
    ) -> ToolResult<Cell> {
        let Some(index) = column else {
            return Ok(Cell::Counted);
        };
        let text = &record[index];
        if request.aggregate == Aggregate::Count {
            return Ok(if text.is_empty() {
                Cell::Blank
            } else {
                Cell::Counted
            });
        }
        let Some(number) = Num::parse(text) else {
            let found = if text.is_empty() {
                "an empty cell".to_string()
            } else {
                format!("`{text}`")
            };
            return Err(ToolError::invalid_arguments(format!(
                "`column` `{}` must hold numbers for `{}`, but `{}` line {line} has {found} \
                 there; leave such rows out with `where`, or use `count`",
                request.column.as_deref().unwrap_or_default(),
                request.aggregate,
                shown,
            )));
        };
        Ok(Cell::Number(number, decimals(text)))
    }
}

/// The running aggregate of some rows.
#[derive(Default)]
struct Fold {
    /// Rows counted: every row without a column, non-empty cells with one.
    count: u64,
    /// The exact sum while every cell is an integer and it has not overflowed.
    int_sum: Option<i128>,
    float_sum: f64,
    min: Option<Num>,
    max: Option<Num>,
    /// True once a cell that is not an integer was added.
    saw_float: bool,
    /// The most decimal places of any cell; `None` once one was in exponent notation.
    places: Option<u32>,
}

impl Fold {
    fn add(&mut self, cell: Cell) {
        let number = match cell {
            Cell::Counted => {
                self.count += 1;
                return;
            }
            Cell::Blank => return,
            Cell::Number(number, places) => {
                self.places = if self.count == 0 {
                    places
                } else {
                    self.places.zip(places).map(|(a, b)| a.max(b))
                };
                number
            }
        };
        self.int_sum = match (self.count, self.int_sum, number) {
            (0, _, Num::Int(int)) => Some(i128::from(int)),
            (_, Some(sum), Num::Int(int)) => sum.checked_add(i128::from(int)),
            _ => None,
        };
        self.saw_float |= matches!(number, Num::Float(_));
        self.count += 1;
        self.float_sum += number.as_f64();
        if self.min.is_none_or(|min| number.total_cmp(min).is_lt()) {
            self.min = Some(number);
        }
        if self.max.is_none_or(|max| number.total_cmp(max).is_gt()) {
            self.max = Some(number);
        }
    }

    /// The aggregate; `None` for `avg`, `min` and `max` of no cells.
    fn result(&self, aggregate: Aggregate) -> Option<Num> {
        let as_float = |number: Num| {
            if self.saw_float {
                Num::Float(number.as_f64())
            } else {
                number
            }
        };
        match aggregate {
            Aggregate::Count => Some(Num::Int(i64::try_from(self.count).unwrap_or(i64::MAX))),
            Aggregate::Sum => Some(match self.int_sum.and_then(|sum| i64::try_from(sum).ok()) {
                Some(sum) if !self.saw_float => Num::Int(sum),
                _ if self.count == 0 => Num::Int(0),
                _ => Num::Float(match self.places {
                    Some(places) => round_to(self.float_sum, places),
                    None => self.float_sum,
                }),
            }),
            Aggregate::Avg => {
                (self.count > 0).then(|| Num::Float(self.float_sum / self.count as f64))
            }
            Aggregate::Min => self.min.map(as_float),
            Aggregate::Max => self.max.map(as_float),
        }
    }
}

/// A filter resolved against the header.
struct Condition {
    index: usize,
    op: FilterOp,
    /// The values compared with, each with its number when it reads as one.
    values: Vec<(String, Option<f64>)>,
}

impl Condition {
    fn new(filter: &Filter, position: usize, columns: &[&str], shown: &str) -> ToolResult<Self> {
        let argument = format!("where[{position}].column");
        let index = column_index(columns, &filter.column, &argument, shown)?;
        let values = match (&filter.value, filter.op) {
            (FilterValue::Many(values), FilterOp::In) => values.clone(),
            (FilterValue::One(_), FilterOp::In) => {
                return Err(ToolError::invalid_arguments(format!(
                    "`where[{position}].value` must be a list for op `in`, e.g. \
                     [\"north\", \"south\"]"
                )));
            }
            (FilterValue::Many(_), op) => {
                return Err(ToolError::invalid_arguments(format!(
                    "`where[{position}].value` is a list, which only op `in` takes; give one \
                     string or number for op `{}`",
                    op_name(op)
                )));
            }
            (FilterValue::One(value), _) => vec![value.clone()],
        };
        let values = values
            .into_iter()
            .map(|value| {
                let number = match &value {
                    Scalar::Number(number) => number.as_f64(),
                    Scalar::Text(text) => Num::parse(text.trim()).map(Num::as_f64),
                };
                let text = match value {
                    Scalar::Number(number) => number.to_string(),
                    Scalar::Text(text) => text.trim().to_string(),
                };
                (text, number)
            })
            .collect();
        Ok(Condition {
            index,
            op: filter.op,
            values,
        })
    }

    fn holds(&self, record: &csv::StringRecord) -> bool {
        let cell = &record[self.index];
        let compare = |(text, number): &(String, Option<f64>)| compare_cell(cell, text, *number);
        let Some(first) = self.values.first() else {
            return false;
        };
        match self.op {
            FilterOp::Eq => compare(first).is_eq(),
            FilterOp::Ne => compare(first).is_ne(),
            FilterOp::In => self.values.iter().any(|value| compare(value).is_eq()),
            FilterOp::Gt => compare(first).is_gt(),
            FilterOp::Gte => compare(first).is_ge(),
            FilterOp::Lt => compare(first).is_lt(),
            FilterOp::Lte => compare(first).is_le(),
        }
    }
}

fn op_name(op: FilterOp) -> &'static str {
    match op {
        FilterOp::Eq => "eq",
        FilterOp::Ne => "ne",
        FilterOp::In => "in",
        FilterOp::Gt => "gt",
        FilterOp::Gte => "gte",
        FilterOp::Lt => "lt",
        FilterOp::Lte => "lte",
    }
}

/// The position of `name` in the header, or an error naming the argument, the header's
/// columns and the closest one.
fn column_index(columns: &[&str], name: &str, argument: &str, shown: &str) -> ToolResult<usize> {
    let mut found = columns.iter().enumerate().filter(|(_, c)| **c == name);
    match (found.next(), found.next()) {
        (Some((index, _)), None) => Ok(index),
        (Some(_), Some(_)) => Err(ToolError::invalid_arguments(format!(
            "`{argument}` names `{name}`, which appears more than once in the header of \
             `{shown}`; rename one of the columns"
        ))),
        (None, _) => {
            let near = closest_names(name, columns.iter().copied(), 1);
            let hint = near
                .first()
                .map_or_else(String::new, |close| format!("; did you mean `{close}`?"));
            let listed: Vec<String> = columns.iter().map(|c| format!("`{c}`")).collect();
            Err(ToolError::invalid_arguments(format!(
                "`{argument}` names the column `{name}`, which `{shown}` does not have; its \
                 columns are {}{hint}",
                listed.join(", ")
            )))
        }
    }
}

fn too_many_groups(shown: &str) -> ToolError {
    ToolError::invalid_arguments(format!(
        "grouping `{shown}` gives more than {MAX_GROUPS} groups; group by fewer or coarser \
         columns in `group_by`, or narrow the rows with `where`"
    ))
}

/// The error for a file that cannot be read as CSV, with its line when known.
fn malformed(shown: &str, err: &csv::Error) -> ToolError {
    let at = err
        .position()
        .map_or_else(String::new, |position| format!(":{}", position.line()));
    let reason = match err.kind() {
        csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => format!("the row has {len} fields but the header has {expected_len}"),
        csv::ErrorKind::Utf8 { err, .. } => format!("the row is not UTF-8 text ({err})"),
        csv::ErrorKind::Io(io) => format!("it could not be read ({io})"),
        _ => err.to_string(),
    };
    ToolError::failed(format!("`{shown}`{at} is not valid CSV: {reason}"))
}
