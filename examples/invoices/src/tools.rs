//! The application's two tools over one invoice book: `create_invoice`, dual-active (in the
//! tools list when an agent mounts it, and callable from code), and `invoice_totals`,
//! code-mode-only (taught by the `invoices` skill alone).

use qilin::{CallPresentation, Detail, Tool, ToolContext, ToolError, ToolResult};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::{Arc, Mutex, MutexGuard};

/// The invoices created so far, shared by both tools.
#[derive(Default)]
pub struct InvoiceBook {
    invoices: Mutex<Vec<Invoice>>,
}

impl InvoiceBook {
    fn invoices(&self) -> MutexGuard<'_, Vec<Invoice>> {
        self.invoices
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }
}

/// One line of an invoice.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct InvoiceLine {
    /// What was sold, as the customer should read it (`Design workshop, half day`).
    pub description: String,
    /// How many units, at least 1.
    pub quantity: u32,
    /// The price of one unit in cents of the invoice's currency (`45000` for 450.00).
    pub unit_price_cents: u64,
}

/// The arguments of `create_invoice`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
pub struct CreateInvoiceArgs {
    /// The customer billed, by the name on their account (`Acme GmbH`).
    pub customer: String,
    /// The currency, as a three-letter ISO 4217 code in capitals (`EUR`, `USD`).
    pub currency: String,
    /// The invoice's lines, at least one.
    pub lines: Vec<InvoiceLine>,
    /// Days the customer has to pay, from 0 (due at once) to 120; 30 when omitted.
    pub due_days: Option<u32>,
}

/// An invoice as created.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Invoice {
    /// Its number: `INV-` and a sequence from 0001.
    pub number: String,
    /// The customer billed.
    pub customer: String,
    /// The currency code.
    pub currency: String,
    /// Its lines, as given.
    pub lines: Vec<InvoiceLine>,
    /// The sum of quantity times unit price over the lines, in cents.
    pub total_cents: u64,
    /// Days the customer has to pay.
    pub due_days: u32,
}

/// The longest payment term an invoice may give, in days.
const MAX_DUE_DAYS: u32 = 120;

/// Creates an invoice for a customer from its lines, numbers it and returns it with its total.
#[derive(Tool)]
#[tool(name = "create_invoice")]
pub struct CreateInvoice {
    /// The book the invoice is written to.
    pub book: Arc<InvoiceBook>,
}

impl Tool for CreateInvoice {
    type Args = CreateInvoiceArgs;
    type Output = Invoice;

    fn prompt_hint(&self) -> &str {
        "Create one invoice per customer and order, only once the customer, the currency and \
         every line (description, quantity, unit price in cents) are known; ask rather than \
         guess a price. Prices are whole cents: 450.00 is 45000. The result carries the \
         invoice number and total: quote them to the user as returned, never recompute them."
    }

    fn present(&self, args: &CreateInvoiceArgs) -> CallPresentation {
        CallPresentation::new(
            "Create an invoice",
            format!(
                "{} ({} lines, {})",
                args.customer,
                args.lines.len(),
                args.currency
            ),
        )
    }

    fn before_detail(&self, args: &CreateInvoiceArgs) -> Option<Detail> {
        let lines: Vec<String> = args
            .lines
            .iter()
            .map(|line| {
                format!(
                    "- {} × {} at {}",
                    line.quantity,
                    line.description,
                    cents(line.unit_price_cents)
                )
            })
            .collect();
        Some(Detail::Markdown {
            markdown: lines.join("\n"),
        })
    }

    fn detail(&self, _: &CreateInvoiceArgs, result: &ToolResult<Invoice>) -> Option<Detail> {
        result.as_ref().ok().map(|invoice| Detail::Text {
            text: format!(
                "{} for {}: {} {}, due in {} days",
                invoice.number,
                invoice.customer,
                cents(invoice.total_cents),
                invoice.currency,
                invoice.due_days
            ),
        })
    }

    async fn call(&self, args: CreateInvoiceArgs, _: &ToolContext) -> ToolResult<Invoice> {
        let customer = args.customer.trim();
        if customer.is_empty() {
            return Err(ToolError::invalid_arguments(
                "`customer` is empty: give the name on the customer's account",
            ));
        }
        check_currency(&args.currency)?;
        if args.lines.is_empty() {
            return Err(ToolError::invalid_arguments(
                "`lines` is empty: an invoice needs at least one line",
            ));
        }
        let mut total: u64 = 0;
        for (index, line) in args.lines.iter().enumerate() {
            if line.quantity == 0 {
                return Err(ToolError::invalid_arguments(format!(
                    "line {} (`{}`) has quantity 0: give at least 1, or leave the line out",
                    index + 1,
                    line.description
                )));
            }
            total = u64::from(line.quantity)
                .checked_mul(line.unit_price_cents)
                .and_then(|amount| total.checked_add(amount))
                .ok_or_else(|| {
                    ToolError::invalid_arguments("the invoice's total is too large to record")
                })?;
        }
        let due_days = args.due_days.unwrap_or(30);
        if due_days > MAX_DUE_DAYS {
            return Err(ToolError::invalid_arguments(format!(
                "`due_days` is {due_days}: give 0 to {MAX_DUE_DAYS} days"
            )));
        }
        let mut invoices = self.book.invoices();
        let invoice = Invoice {
            number: format!("INV-{:04}", invoices.len() + 1),
            customer: customer.to_string(),
            currency: args.currency,
            lines: args.lines,
            total_cents: total,
            due_days,
        };
        invoices.push(invoice.clone());
        Ok(invoice)
    }
}

/// The arguments of `invoice_totals`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
pub struct InvoiceTotalsArgs {
    /// Only this customer's invoices; every customer's when omitted.
    pub customer: Option<String>,
    /// Only invoices in this currency (a three-letter code); every currency when omitted.
    pub currency: Option<String>,
}

/// The invoices of one customer in one currency.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct CustomerTotal {
    /// The customer.
    pub customer: String,
    /// The currency code.
    pub currency: String,
    /// How many invoices.
    pub invoices: u32,
    /// Their total, in cents.
    pub total_cents: u64,
}

/// What `invoice_totals` returns.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct InvoiceTotals {
    /// How many invoices matched.
    pub invoices: u32,
    /// Per customer and currency, sorted by customer then currency.
    pub by_customer: Vec<CustomerTotal>,
}

/// Totals the invoices created so far, per customer and currency.
#[derive(Tool)]
#[tool(name = "invoice_totals", code_mode_only, read_only)]
pub struct InvoiceTotalsTool {
    /// The book read.
    pub book: Arc<InvoiceBook>,
}

impl Tool for InvoiceTotalsTool {
    type Args = InvoiceTotalsArgs;
    type Output = InvoiceTotals;

    fn prompt_hint(&self) -> &str {
        ""
    }

    fn present(&self, args: &InvoiceTotalsArgs) -> CallPresentation {
        let customer = args.customer.as_deref().unwrap_or("every customer");
        CallPresentation::new("Total the invoices", customer)
    }

    fn before_detail(&self, _: &InvoiceTotalsArgs) -> Option<Detail> {
        None
    }

    fn detail(&self, _: &InvoiceTotalsArgs, result: &ToolResult<InvoiceTotals>) -> Option<Detail> {
        result.as_ref().ok().map(|totals| Detail::Text {
            text: totals
                .by_customer
                .iter()
                .map(|row| {
                    format!(
                        "{}: {} invoice(s), {} {}",
                        row.customer,
                        row.invoices,
                        cents(row.total_cents),
                        row.currency
                    )
                })
                .collect::<Vec<_>>()
                .join("\n"),
        })
    }

    async fn call(&self, args: InvoiceTotalsArgs, _: &ToolContext) -> ToolResult<InvoiceTotals> {
        if let Some(currency) = &args.currency {
            check_currency(currency)?;
        }
        let invoices = self.book.invoices();
        let mut by_customer: Vec<CustomerTotal> = Vec::new();
        let mut matched = 0;
        for invoice in invoices.iter().filter(|invoice| {
            args.customer
                .as_ref()
                .is_none_or(|c| *c == invoice.customer)
                && args
                    .currency
                    .as_ref()
                    .is_none_or(|c| *c == invoice.currency)
        }) {
            matched += 1;
            match by_customer
                .iter_mut()
                .find(|row| row.customer == invoice.customer && row.currency == invoice.currency)
            {
                Some(row) => {
                    row.invoices += 1;
                    row.total_cents = row.total_cents.saturating_add(invoice.total_cents);
                }
                None => by_customer.push(CustomerTotal {
                    customer: invoice.customer.clone(),
                    currency: invoice.currency.clone(),
                    invoices: 1,
                    total_cents: invoice.total_cents,
                }),
            }
        }
        by_customer.sort_by(|a, b| (&a.customer, &a.currency).cmp(&(&b.customer, &b.currency)));
        Ok(InvoiceTotals {
            invoices: matched,
            by_customer,
        })
    }
}

/// Refuses a currency that is not three capital letters.
fn check_currency(currency: &str) -> Result<(), ToolError> {
    if currency.len() == 3 && currency.bytes().all(|b| b.is_ascii_uppercase()) {
        Ok(())
    } else {
        Err(ToolError::invalid_arguments(format!(
            "`currency` is `{currency}`: give a three-letter ISO 4217 code in capitals, such as \
             `EUR` or `USD`"
        )))
    }
}

/// An amount in cents as a decimal: `45000` → `450.00`.
fn cents(amount: u64) -> String {
    format!("{}.{:02}", amount / 100, amount % 100)
}
