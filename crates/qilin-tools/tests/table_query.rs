//! `table_query` through the real execution layer: code-mode-only, every aggregate, grouping,
//! filters, ordering, and the errors a model can act on.

mod common;

use common::{Harness, harness, symlink, text};
use qilin_protocol::{CallStatus, Detail, ErrorCode, EventBody};
use qilin_tool::CallOutcome;
use serde_json::{Value, json};

const SALES: &str = "\
month,region,product,units,revenue,orders
2025-01,north,widget,10,125.50,3
2025-01,south,widget,4,50.00,1
2025-02,north,gadget,2,80.00,2
2025-02,north,widget,6,75.25,2
2025-03,south,gadget,5,200.00,4
2025-03,north,widget,1,12.50,1
";

fn sales() -> Harness {
    let h = harness();
    h.write("data/sales.csv", SALES);
    h
}

/// Calls `table_query` as Python in `run_code` would.
async fn query(h: &Harness, arguments: Value) -> CallOutcome {
    h.call_from_code("table_query", arguments).await
}

async fn ok(h: &Harness, arguments: Value) -> Value {
    let outcome = query(h, arguments).await;
    assert_eq!(outcome.status, CallStatus::Ok, "{:?}", outcome.error);
    outcome.output.unwrap()
}

async fn err(h: &Harness, arguments: Value, code: ErrorCode) -> String {
    let outcome = query(h, arguments).await;
    let error = outcome
        .error
        .unwrap_or_else(|| panic!("succeeded: {}", text(&outcome.content)));
    assert_eq!(error.code, code, "{}", error.message);
    error.message
}

fn values(output: &Value) -> Vec<Value> {
    output["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| row["value"].clone())
        .collect()
}

#[tokio::test]
async fn a_direct_call_is_refused_and_a_call_from_code_runs() {
    let h = sales();
    let message = h
        .err(
            "table_query",
            json!({"path": "data/sales.csv", "column": "units"}),
            ErrorCode::CodeModeOnly,
        )
        .await;
    assert!(message.contains("table_query"), "{message}");
    let output = ok(&h, json!({"path": "data/sales.csv", "column": "units"})).await;
    assert_eq!(
        output,
        json!({
            "columns_grouped": [],
            "aggregate": "sum",
            "column": "units",
            "rows": [{"value": 28}],
            "total": 28,
            "row_count": 1,
            "matched_rows": 6,
            "truncated": false,
        })
    );
}

#[tokio::test]
async fn each_aggregate_keeps_integers_integral_and_gives_floats_otherwise() {
    let h = sales();
    let path = "data/sales.csv";
    let cases = [
        ("sum", "units", json!(28)),
        ("sum", "revenue", json!(543.25)),
        ("avg", "units", json!(28.0 / 6.0)),
        ("avg", "orders", json!(2.1666666666666665)),
        ("min", "units", json!(1)),
        ("min", "revenue", json!(12.5)),
        ("max", "units", json!(10)),
        ("max", "revenue", json!(200.0)),
        ("count", "units", json!(6)),
    ];
    for (aggregate, column, expected) in cases {
        let output = ok(
            &h,
            json!({"path": path, "aggregate": aggregate, "column": column}),
        )
        .await;
        assert_eq!(output["total"], expected, "{aggregate}({column})");
        assert_eq!(output["aggregate"], aggregate);
        assert_eq!(
            output["total"].is_i64(),
            expected.is_i64(),
            "{aggregate}({column}) integer-ness"
        );
    }
    let output = ok(&h, json!({"path": path, "aggregate": "count"})).await;
    assert_eq!(output["total"], 6);
    assert_eq!(output["column"], Value::Null);
}

#[tokio::test]
async fn count_with_a_column_skips_its_empty_cells() {
    let h = harness();
    h.write("t.csv", "name,note\na,x\nb,\nc,y\n");
    let output = ok(
        &h,
        json!({"path": "t.csv", "aggregate": "count", "column": "note"}),
    )
    .await;
    assert_eq!(output["total"], 2);
    assert_eq!(output["matched_rows"], 3);
}

#[tokio::test]
async fn grouping_by_two_columns_orders_by_the_group_values() {
    let h = sales();
    let output = ok(
        &h,
        json!({"path": "data/sales.csv", "column": "units", "group_by": ["region", "product"]}),
    )
    .await;
    assert_eq!(output["columns_grouped"], json!(["region", "product"]));
    assert_eq!(
        output["rows"],
        json!([
            {"region": "north", "product": "gadget", "value": 2},
            {"region": "north", "product": "widget", "value": 17},
            {"region": "south", "product": "gadget", "value": 5},
            {"region": "south", "product": "widget", "value": 4},
        ])
    );
    assert_eq!(output["row_count"], 4);
    assert_eq!(output["total"], 28);
}

#[tokio::test]
async fn each_filter_op_selects_its_rows() {
    let h = sales();
    let cases = [
        (
            json!({"column": "region", "op": "eq", "value": "north"}),
            19,
        ),
        (json!({"column": "region", "op": "ne", "value": "north"}), 9),
        (
            json!({"column": "month", "op": "in", "value": ["2025-01", "2025-03"]}),
            20,
        ),
        (json!({"column": "units", "op": "gt", "value": 5}), 16),
        (json!({"column": "units", "op": "gte", "value": 5}), 21),
        (json!({"column": "units", "op": "lt", "value": "5"}), 7),
        (json!({"column": "units", "op": "lte", "value": 5}), 12),
        (json!({"column": "revenue", "op": "eq", "value": 80}), 2),
        (json!({"column": "orders", "op": "in", "value": [3, 4]}), 15),
    ];
    for (filter, expected) in cases {
        let output = ok(
            &h,
            json!({"path": "data/sales.csv", "column": "units", "where": [filter.clone()]}),
        )
        .await;
        assert_eq!(output["total"], expected, "{filter}");
    }
}

#[tokio::test]
async fn a_month_range_compares_months_as_text_and_all_filters_must_hold() {
    let h = sales();
    let output = ok(
        &h,
        json!({
            "path": "data/sales.csv",
            "column": "revenue",
            "group_by": ["month"],
            "where": [
                {"column": "month", "op": "gte", "value": "2025-02"},
                {"column": "month", "op": "lte", "value": "2025-03"},
                {"column": "region", "op": "eq", "value": "north"},
            ],
        }),
    )
    .await;
    assert_eq!(
        output["rows"],
        json!([
            {"month": "2025-02", "value": 155.25},
            {"month": "2025-03", "value": 12.5},
        ])
    );
    assert_eq!(output["matched_rows"], 3);
    assert_eq!(output["total"], 167.75);
}

#[tokio::test]
async fn order_by_value_with_a_limit_cuts_and_says_so() {
    let h = sales();
    let arguments = |order: &str, limit: usize| {
        json!({"path": "data/sales.csv", "column": "revenue", "group_by": ["month"],
               "order_by": order, "limit": limit})
    };
    let output = ok(&h, arguments("value_desc", 2)).await;
    assert_eq!(values(&output), [json!(212.5), json!(175.5)]);
    assert_eq!(output["rows"][0]["month"], "2025-03");
    assert_eq!(output["row_count"], 3);
    assert_eq!(output["truncated"], true);
    assert_eq!(output["total"], 543.25);
    let output = ok(&h, arguments("value_asc", 3)).await;
    assert_eq!(values(&output), [json!(155.25), json!(175.5), json!(212.5)]);
    assert_eq!(output["truncated"], false);
    let output = ok(&h, arguments("group", 1)).await;
    assert_eq!(
        output["rows"],
        json!([{"month": "2025-01", "value": 175.5}])
    );
}

#[tokio::test]
async fn decimal_sums_read_as_decimals_and_no_match_gives_zero_or_null() {
    let h = harness();
    h.write("p.csv", "item,price\na,0.10\nb,0.20\nc,-0.05\n");
    let output = ok(&h, json!({"path": "p.csv", "column": "price"})).await;
    assert_eq!(output["total"], 0.25);
    let nothing = json!([{"column": "item", "op": "eq", "value": "zzz"}]);
    let output = ok(
        &h,
        json!({"path": "p.csv", "column": "price", "where": nothing}),
    )
    .await;
    assert_eq!(output["total"], 0);
    assert_eq!(output["rows"], json!([]));
    assert_eq!(output["matched_rows"], 0);
    let output = ok(
        &h,
        json!({"path": "p.csv", "aggregate": "max", "column": "price", "where": nothing}),
    )
    .await;
    assert_eq!(output["total"], Value::Null);
}

#[tokio::test]
async fn a_quoted_field_with_a_comma_is_one_cell() {
    let h = harness();
    h.write(
        "clients.csv",
        "client,city,amount\n\"Acme, Inc.\",Oslo,10\n\"Beta \"\"B\"\" Ltd\",Oslo,5\n\"Acme, Inc.\",Rome,7\n",
    );
    let output = ok(
        &h,
        json!({"path": "clients.csv", "column": "amount", "group_by": ["client"]}),
    )
    .await;
    assert_eq!(
        output["rows"],
        json!([
            {"client": "Acme, Inc.", "value": 17},
            {"client": "Beta \"B\" Ltd", "value": 5},
        ])
    );
}

#[tokio::test]
async fn a_byte_order_mark_and_spaces_around_fields_are_ignored() {
    let h = harness();
    h.write("excel.csv", "\u{feff}region , units\nnorth, 3\n north ,4\n");
    let output = ok(
        &h,
        json!({"path": "excel.csv", "column": "units", "group_by": ["region"]}),
    )
    .await;
    assert_eq!(output["rows"], json!([{"region": "north", "value": 7}]));
}

#[tokio::test]
async fn an_unknown_column_lists_the_header_and_suggests_the_closest() {
    let h = sales();
    let message = err(
        &h,
        json!({"path": "data/sales.csv", "column": "units", "group_by": ["regoin"]}),
        ErrorCode::InvalidArguments,
    )
    .await;
    assert!(
        message.contains("`group_by` names the column `regoin`"),
        "{message}"
    );
    assert!(
        message.contains("`month`, `region`, `product`, `units`, `revenue`, `orders`"),
        "{message}"
    );
    assert!(message.contains("did you mean `region`?"), "{message}");
    let message = err(
        &h,
        json!({"path": "data/sales.csv", "column": "revenu"}),
        ErrorCode::InvalidArguments,
    )
    .await;
    assert!(
        message.contains("`column` names the column `revenu`"),
        "{message}"
    );
    let message = err(
        &h,
        json!({"path": "data/sales.csv", "column": "units",
               "where": [{"column": "mnth", "op": "eq", "value": "2025-01"}]}),
        ErrorCode::InvalidArguments,
    )
    .await;
    assert!(message.contains("`where[0].column`"), "{message}");
    assert!(message.contains("did you mean `month`?"), "{message}");
}

#[tokio::test]
async fn a_non_numeric_cell_names_the_file_line_and_value() {
    let h = harness();
    h.write("t.csv", "name,amount\na,1\nb,lots\nc,2\n");
    let message = err(
        &h,
        json!({"path": "t.csv", "column": "amount"}),
        ErrorCode::InvalidArguments,
    )
    .await;
    assert!(message.contains("`t.csv` line 3 has `lots`"), "{message}");
    let message = err(
        &h,
        json!({"path": "t.csv", "aggregate": "avg", "column": "name"}),
        ErrorCode::InvalidArguments,
    )
    .await;
    assert!(message.contains("line 2 has `a`"), "{message}");
    let output = ok(
        &h,
        json!({"path": "t.csv", "column": "amount",
               "where": [{"column": "name", "op": "ne", "value": "b"}]}),
    )
    .await;
    assert_eq!(output["total"], 3);
}

#[tokio::test]
async fn bad_arguments_are_named() {
    let h = sales();
    let path = "data/sales.csv";
    let message = err(
        &h,
        json!({"path": path, "aggregate": "avg"}),
        ErrorCode::InvalidArguments,
    )
    .await;
    assert!(message.contains("`column` is missing"), "{message}");
    let message = err(
        &h,
        json!({"path": path, "column": "units", "where": [{"column": "month", "op": "like", "value": "2025"}]}),
        ErrorCode::InvalidArguments,
    )
    .await;
    assert!(message.contains("where.0.op"), "{message}");
    assert!(message.contains("\"gte\""), "{message}");
    let message = err(
        &h,
        json!({"path": path, "column": "units", "where": [{"column": "month", "op": "in", "value": "2025-01"}]}),
        ErrorCode::InvalidArguments,
    )
    .await;
    assert!(message.contains("must be a list for op `in`"), "{message}");
    let message = err(
        &h,
        json!({"path": path, "column": "units", "where": [{"column": "month", "op": "eq", "value": ["2025-01"]}]}),
        ErrorCode::InvalidArguments,
    )
    .await;
    assert!(message.contains("only op `in` takes"), "{message}");
    let message = err(
        &h,
        json!({"path": path, "column": "units", "limit": 10001}),
        ErrorCode::InvalidArguments,
    )
    .await;
    assert!(message.contains("limit"), "{message}");
    let message = err(
        &h,
        json!({"path": path, "column": "units", "group_by": ["region", "region"]}),
        ErrorCode::InvalidArguments,
    )
    .await;
    assert!(message.contains("`region` twice"), "{message}");
    let message = err(
        &h,
        json!({"path": path, "aggregate": "count", "group_by": ["value"]}),
        ErrorCode::InvalidArguments,
    )
    .await;
    assert!(
        message.contains("`group_by` names the column `value`"),
        "{message}"
    );
}

#[tokio::test]
async fn missing_malformed_and_escaping_files_are_refused() {
    let h = sales();
    let message = err(
        &h,
        json!({"path": "data/sale.csv", "aggregate": "count"}),
        ErrorCode::InvalidArguments,
    )
    .await;
    assert!(
        message.contains("`data/sale.csv` does not exist"),
        "{message}"
    );
    h.write("bad.csv", "a,b\n1,2\n3\n");
    let message = err(
        &h,
        json!({"path": "bad.csv", "aggregate": "count"}),
        ErrorCode::ToolFailed,
    )
    .await;
    assert!(
        message.contains("`bad.csv`:3 is not valid CSV: the row has 1 fields but the header has 2"),
        "{message}"
    );
    h.write("empty.csv", "");
    let message = err(
        &h,
        json!({"path": "empty.csv", "aggregate": "count"}),
        ErrorCode::ToolFailed,
    )
    .await;
    assert!(message.contains("has no header row"), "{message}");
    h.write("latin1.csv", b"name,amount\ncaf\xe9,1\n");
    let message = err(
        &h,
        json!({"path": "latin1.csv", "aggregate": "count"}),
        ErrorCode::ToolFailed,
    )
    .await;
    assert!(
        message.contains("`latin1.csv`:2 is not valid CSV"),
        "{message}"
    );

    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.csv"), "a\n1\n").unwrap();
    symlink(outside.path(), &h.path("link"));
    for path in ["../secret.csv", "/etc/passwd", "link/secret.csv"] {
        let message = err(
            &h,
            json!({"path": path, "aggregate": "count"}),
            ErrorCode::InvalidArguments,
        )
        .await;
        assert!(message.contains(&format!("`{path}`")), "{message}");
        assert!(
            message.contains("outside the workspace") || message.contains("through a symlink"),
            "{message}"
        );
    }
}

#[tokio::test]
async fn the_card_names_the_query_and_shows_the_first_groups() {
    let mut h = sales();
    ok(
        &h,
        json!({"path": "data/sales.csv", "column": "revenue", "group_by": ["region"],
               "where": [{"column": "month", "op": "gte", "value": "2025-02"}]}),
    )
    .await;
    let mut presentation = None;
    let mut detail = None;
    for event in h.drain() {
        match event.body {
            EventBody::ToolStart(start) => presentation = Some(start.presentation),
            EventBody::ToolResult(result) => detail = result.detail,
            _ => {}
        }
    }
    let presentation = presentation.expect("a tool.start event");
    assert_eq!(presentation.action, "Query table");
    assert_eq!(
        presentation.remark,
        "data/sales.csv: sum(revenue) by region where month >= 2025-02"
    );
    let Some(Detail::Markdown { markdown }) = detail else {
        panic!("a Markdown detail, got {detail:?}");
    };
    assert!(
        markdown.starts_with(
            "| region | sum(revenue) |\n| --- | --- |\n| north | 167.75 |\n| south | 200.0 |\n"
        ),
        "{markdown}"
    );
    assert!(
        markdown.contains("Total: 367.75 over 4 matching rows."),
        "{markdown}"
    );
}
