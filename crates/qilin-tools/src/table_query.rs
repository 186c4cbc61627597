//! `table_query`: aggregate a CSV file of the workspace, filtered and grouped
//! (code-mode-only).

use crate::file_access::{FileScope, blocking};
use crate::stop_flag::StopOnDrop;
use crate::table_scan::{GroupValue, Scan, ScanRequest, scan};
use crate::text_file::read_error;
use qilin_protocol::{CallPresentation, Detail};
use qilin_tool::{PathKind, Tool, ToolContext, ToolError, ToolResult};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// Groups returned when the call gives no `limit`.
pub const DEFAULT_ROW_LIMIT: usize = 1000;
/// The most groups a call may ask for.
pub const MAX_ROW_LIMIT: usize = 10_000;
/// The largest file queried; larger ones are refused.
pub const MAX_TABLE_BYTES: u64 = 256 * 1024 * 1024;
/// The most distinct groups one query may build; more is refused.
pub const MAX_GROUPS: usize = 100_000;
/// Groups shown in the call's detail card.
const DETAIL_ROWS: usize = 20;

/// Aggregate a CSV file of the workspace.
///
/// Keeps the rows that meet every `where` condition, groups them by the `group_by` columns
/// and computes one aggregate of `column` per group, plus the total. The file needs a header
/// row naming its columns; fields are comma-separated, may be quoted as in RFC 4180, and
/// surrounding spaces are ignored. The file is read as a stream, up to 256 MiB and 100000
/// distinct groups.
#[derive(qilin_tool::Tool)]
#[tool(name = "table_query", code_mode_only, read_only, paths = ["path"])]
pub struct TableQuery;

/// How the cells of a group are combined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Aggregate {
    /// the sum of `column`
    #[default]
    Sum,
    /// the mean of `column`, always a float
    Avg,
    /// the smallest value of `column`
    Min,
    /// the largest value of `column`
    Max,
    /// the number of rows; with `column`, the rows whose cell in it is not empty
    Count,
}

impl fmt::Display for Aggregate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Aggregate::Sum => "sum",
            Aggregate::Avg => "avg",
            Aggregate::Min => "min",
            Aggregate::Max => "max",
            Aggregate::Count => "count",
        })
    }
}

/// How a filter compares a cell with its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum FilterOp {
    /// the cell equals the value
    Eq,
    /// the cell differs from the value
    Ne,
    /// the cell equals one of the values (a list)
    In,
    /// the cell is greater than the value
    Gt,
    /// the cell is greater than or equal to the value
    Gte,
    /// the cell is less than the value
    Lt,
    /// the cell is less than or equal to the value
    Lte,
}

impl FilterOp {
    /// The operator as shown on the call's card.
    pub fn symbol(self) -> &'static str {
        match self {
            FilterOp::Eq => "=",
            FilterOp::Ne => "!=",
            FilterOp::In => "in",
            FilterOp::Gt => ">",
            FilterOp::Gte => ">=",
            FilterOp::Lt => "<",
            FilterOp::Lte => "<=",
        }
    }
}

/// One value a filter compares with: a string or a number.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Scalar {
    /// A number, compared numerically with cells that hold numbers.
    Number(serde_json::Number),
    /// A string.
    Text(String),
}

impl fmt::Display for Scalar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Scalar::Number(number) => write!(f, "{number}"),
            Scalar::Text(text) => f.write_str(text),
        }
    }
}

/// The value of a filter: one value, or a list of values for `in`.
#[derive(Debug, Clone, PartialEq, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum FilterValue {
    /// One string or number (every op but `in`).
    One(Scalar),
    /// A list of strings or numbers (op `in`).
    Many(Vec<Scalar>),
}

/// One condition a row must meet.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Filter {
    /// The column whose cell is compared.
    pub column: String,
    /// The comparison. Cells and values are compared as numbers when both read as numbers,
    /// else as strings (case-sensitive), so `YYYY-MM` months compare in calendar order.
    pub op: FilterOp,
    /// What the cell is compared with: a string or number, or a list of them for `in`.
    pub value: FilterValue,
}

/// The order of the returned groups.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OrderBy {
    /// by the grouped cells, column by column: numbers numerically and before text
    #[default]
    Group,
    /// by the aggregate, largest first
    ValueDesc,
    /// by the aggregate, smallest first
    ValueAsc,
}

/// Arguments of `table_query`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TableQueryArgs {
    /// The CSV file, relative to the workspace root; its first row names the columns.
    pub path: String,
    /// How each group's cells are combined (default `sum`).
    pub aggregate: Option<Aggregate>,
    /// The column to aggregate; its cells in matching rows must be numbers. Required unless
    /// `aggregate` is `count`.
    pub column: Option<String>,
    /// The columns to group by, in order; one group per distinct combination of their cells.
    /// No grouping (one group, the total) when absent or empty.
    pub group_by: Option<Vec<String>>,
    /// Conditions every counted row must meet (all of them); every row when absent.
    #[serde(rename = "where")]
    pub filters: Option<Vec<Filter>>,
    /// The order of the returned groups (default `group`).
    pub order_by: Option<OrderBy>,
    /// The most groups returned (default 1000, at most 10000); `truncated` says when more
    /// matched.
    #[schemars(range(min = 1, max = 10000))]
    pub limit: Option<usize>,
}

/// One group and its aggregate: a key per grouped column holding the group's cell text, and
/// `value`.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct TableRow {
    /// The group's cell in each grouped column, keyed by the column's name.
    #[serde(flatten)]
    pub groups: BTreeMap<String, String>,
    /// The aggregate over the group's rows.
    pub value: serde_json::Number,
}

/// The result of a query.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct TableQueryOutput {
    /// The grouped columns, in the order given in `group_by`.
    pub columns_grouped: Vec<String>,
    /// The aggregate computed.
    pub aggregate: Aggregate,
    /// The aggregated column; null for a `count` without one.
    pub column: Option<String>,
    /// One entry per group, in `order_by` order, at most `limit`: a key per grouped column
    /// holding the group's cell text, and `value`, the aggregate. An integer when every
    /// aggregated cell is an integer (`sum`, `min`, `max`) and always for `count`; a float
    /// otherwise and always for `avg`.
    pub rows: Vec<TableRow>,
    /// The aggregate over every matching row, not only the groups returned; null for `avg`,
    /// `min` and `max` when no row matched (0 for `sum` and `count`).
    pub total: Option<serde_json::Number>,
    /// How many groups matched in all.
    pub row_count: usize,
    /// How many rows of the file met every `where` condition.
    pub matched_rows: u64,
    /// True when more than `limit` groups matched and the rest were left out.
    pub truncated: bool,
}

impl Tool for TableQuery {
    type Args = TableQueryArgs;
    type Output = TableQueryOutput;

    fn prompt_hint(&self) -> &str {
        "Aggregate a CSV file from code; compute further in Python on the returned rows."
    }

    fn present(&self, args: &TableQueryArgs) -> CallPresentation {
        let aggregate = args.aggregate.unwrap_or_default();
        let column = args.column.as_deref().unwrap_or("*");
        let mut remark = format!("{}: {aggregate}({column})", args.path);
        if let Some(group_by) = args.group_by.as_ref().filter(|g| !g.is_empty()) {
            remark.push_str(&format!(" by {}", group_by.join(", ")));
        }
        if let Some(filters) = args.filters.as_ref().filter(|f| !f.is_empty()) {
            let shown: Vec<String> = filters.iter().map(filter_text).collect();
            remark.push_str(&format!(" where {}", shown.join(" and ")));
        }
        CallPresentation::new("Query table", remark)
    }

    fn before_detail(&self, _args: &TableQueryArgs) -> Option<Detail> {
        None
    }

    fn detail(
        &self,
        _args: &TableQueryArgs,
        result: &ToolResult<TableQueryOutput>,
    ) -> Option<Detail> {
        Some(match result {
            Ok(output) => Detail::Markdown {
                markdown: markdown_table(output),
            },
            Err(error) => Detail::Text {
                text: error.message.clone(),
            },
        })
    }

    async fn call(&self, args: TableQueryArgs, cx: &ToolContext) -> ToolResult<TableQueryOutput> {
        let aggregate = args.aggregate.unwrap_or_default();
        if args.column.is_none() && aggregate != Aggregate::Count {
            return Err(ToolError::invalid_arguments(format!(
                "`column` is missing; `{aggregate}` needs the numeric column to aggregate \
                 (only `count` works without one)"
            )));
        }
        let limit = args.limit.unwrap_or(DEFAULT_ROW_LIMIT);
        if !(1..=MAX_ROW_LIMIT).contains(&limit) {
            return Err(ToolError::invalid_arguments(format!(
                "`limit` is {limit}; give 1 to {MAX_ROW_LIMIT}"
            )));
        }
        let group_by = args.group_by.unwrap_or_default();
        check_group_by(&group_by)?;
        let scope = FileScope::of(cx);
        let request = ScanRequest {
            path: args.path.clone(),
            aggregate,
            column: args.column.clone(),
            group_by: group_by.clone(),
            filters: args.filters.unwrap_or_default(),
        };
        let stop = Arc::new(AtomicBool::new(false));
        let _stop_on_drop = StopOnDrop(Arc::clone(&stop));
        let order_by = args.order_by.unwrap_or_default();
        let scanned = blocking(move || {
            let (_, path) = scope.readable(&request.path)?;
            if path.kind() == PathKind::Folder {
                return Err(ToolError::invalid_arguments(format!(
                    "`path` `{}` is a folder; give a CSV file",
                    path.relative()
                )));
            }
            let file = path.open_file().map_err(|err| read_error(&path, err))?;
            let size = file.metadata().map_err(|err| read_error(&path, err))?.len();
            if size > MAX_TABLE_BYTES {
                return Err(ToolError::invalid_arguments(format!(
                    "`path` `{}` is {size} bytes; `table_query` reads files up to \
                     {MAX_TABLE_BYTES} bytes",
                    path.relative()
                )));
            }
            let mut scanned = scan(&request, file, path.relative(), &stop)?;
            scanned.sort(order_by);
            Ok(scanned)
        })
        .await?;
        output(scanned, group_by, aggregate, args.column, limit)
    }
}

/// Cuts the ordered groups to `limit` and builds the tool's output.
fn output(
    scanned: Scan,
    group_by: Vec<String>,
    aggregate: Aggregate,
    column: Option<String>,
    limit: usize,
) -> ToolResult<TableQueryOutput> {
    let row_count = scanned.groups.len();
    let mut rows = Vec::with_capacity(row_count.min(limit));
    for GroupValue { key, value } in scanned.groups.into_iter().take(limit) {
        rows.push(TableRow {
            groups: group_by.iter().cloned().zip(key).collect(),
            value: value.to_json()?,
        });
    }
    Ok(TableQueryOutput {
        columns_grouped: group_by,
        aggregate,
        column,
        rows,
        total: scanned.total.map(|total| total.to_json()).transpose()?,
        row_count,
        matched_rows: scanned.matched_rows,
        truncated: row_count > limit,
    })
}

/// Refuses a column grouped twice, and one named `value` (each row's key for the aggregate).
fn check_group_by(group_by: &[String]) -> ToolResult<()> {
    for (index, name) in group_by.iter().enumerate() {
        if name == "value" {
            return Err(ToolError::invalid_arguments(
                "`group_by` names the column `value`, but each returned row uses the key \
                 `value` for the aggregate; aggregate or filter on that column instead",
            ));
        }
        if group_by[..index].contains(name) {
            return Err(ToolError::invalid_arguments(format!(
                "`group_by` names the column `{name}` twice; give each column once"
            )));
        }
    }
    Ok(())
}

fn filter_text(filter: &Filter) -> String {
    let value = match &filter.value {
        FilterValue::One(one) => one.to_string(),
        FilterValue::Many(many) => {
            let shown: Vec<String> = many.iter().map(Scalar::to_string).collect();
            format!("[{}]", shown.join(", "))
        }
    };
    format!("{} {} {value}", filter.column, filter.op.symbol())
}

/// The first groups as a Markdown table, then how many more and the total.
fn markdown_table(output: &TableQueryOutput) -> String {
    let heading = format!(
        "{}({})",
        output.aggregate,
        output.column.as_deref().unwrap_or("*")
    );
    let mut header: Vec<&str> = output.columns_grouped.iter().map(String::as_str).collect();
    header.push(&heading);
    let mut text = format!(
        "| {} |\n",
        header
            .iter()
            .map(|h| cell(h))
            .collect::<Vec<_>>()
            .join(" | ")
    );
    text.push_str(&format!("|{}\n", " --- |".repeat(header.len())));
    for row in output.rows.iter().take(DETAIL_ROWS) {
        let mut cells: Vec<String> = output
            .columns_grouped
            .iter()
            .map(|name| cell(row.groups.get(name).map_or("", String::as_str)))
            .collect();
        cells.push(row.value.to_string());
        text.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    let shown = output.rows.len().min(DETAIL_ROWS);
    if output.row_count > shown {
        text.push_str(&format!(
            "\n{} of {} groups shown.\n",
            shown, output.row_count
        ));
    }
    let total = output
        .total
        .as_ref()
        .map_or_else(|| "none".to_string(), ToString::to_string);
    text.push_str(&format!(
        "\nTotal: {total} over {} matching rows.\n",
        output.matched_rows
    ));
    text
}

/// A cell's text made safe inside a Markdown table row.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}
