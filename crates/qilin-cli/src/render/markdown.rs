//! A model's Markdown rendered for a terminal: headings and strong text bold, emphasis in
//! italics, inline code and links coloured, lists with their markers and indents, quotes with
//! a bar, code blocks indented as written, tables aligned — each paragraph wrapped to the
//! terminal's width. The text was made visible first (no escapes of its own).

use super::style::Style;
use super::text::{width, wrap};
use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

/// `markdown` rendered in `style` as lines of at most `columns` columns (code lines excepted,
/// which keep their length), top-level blocks separated by one blank line.
pub fn render(markdown: &str, style: &Style, columns: usize) -> Vec<String> {
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let mut renderer = Renderer {
        style,
        columns: columns.max(20),
        lines: Vec::new(),
        inline: String::new(),
        containers: Vec::new(),
        marker: None,
        active: Vec::new(),
        links: Vec::new(),
        code: None,
        table: None,
        heading: false,
    };
    for event in Parser::new_ext(markdown, options) {
        renderer.event(event);
    }
    renderer.flush_inline();
    while renderer.lines.last().is_some_and(|l| l.trim().is_empty()) {
        renderer.lines.pop();
    }
    renderer.lines
}

enum Container {
    Quote,
    List { next: Option<u64> },
    Item { indent: usize },
}

struct Table {
    rows: Vec<Vec<String>>,
    row: Vec<String>,
    header_rows: usize,
}

struct Renderer<'a> {
    style: &'a Style,
    columns: usize,
    lines: Vec<String>,
    inline: String,
    containers: Vec<Container>,
    /// The marker of an item whose first line is not written yet.
    marker: Option<String>,
    /// The colour codes in force in the inline text.
    active: Vec<&'static str>,
    /// The destinations of the links open now.
    links: Vec<String>,
    /// The lines of the code block open now.
    code: Option<String>,
    table: Option<Table>,
    heading: bool,
}

impl Renderer<'_> {
    fn event(&mut self, event: Event<'_>) {
        match event {
            Event::Start(tag) => self.start(tag),
            Event::End(tag) => self.end(tag),
            Event::Text(text) => match &mut self.code {
                Some(code) => code.push_str(&text),
                None => self.inline.push_str(&text),
            },
            Event::Code(code) => {
                let painted = self.with_code("36", &code);
                self.inline.push_str(&painted);
            }
            Event::SoftBreak => self.inline.push(' '),
            Event::HardBreak => self.flush_inline(),
            Event::Rule => {
                self.block_gap();
                let rule = "─".repeat(self.columns.min(40));
                self.lines.push(self.style.dim(&rule));
            }
            Event::TaskListMarker(done) => self.inline.push_str(if done { "[x] " } else { "[ ] " }),
            Event::Html(html) | Event::InlineHtml(html) => match &mut self.code {
                Some(code) => code.push_str(&html),
                None => self.inline.push_str(html.trim_end_matches('\n')),
            },
            Event::FootnoteReference(name) => self.inline.push_str(&format!("[^{name}]")),
            Event::InlineMath(math) | Event::DisplayMath(math) => self.inline.push_str(&math),
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph => self.block_gap(),
            Tag::Heading { .. } => {
                self.block_gap();
                self.heading = true;
                self.open("1");
            }
            Tag::BlockQuote(_) => {
                self.flush_inline();
                self.block_gap();
                self.containers.push(Container::Quote);
            }
            Tag::CodeBlock(_) => {
                self.flush_inline();
                self.block_gap();
                self.code = Some(String::new());
            }
            Tag::List(start) => {
                self.flush_inline();
                if !self.in_list() {
                    self.block_gap();
                }
                self.containers.push(Container::List { next: start });
            }
            Tag::Item => {
                self.flush_inline();
                let marker = match self.containers.last_mut() {
                    Some(Container::List { next: Some(n) }) => {
                        let marker = format!("{n}. ");
                        *n += 1;
                        marker
                    }
                    _ => "- ".to_string(),
                };
                self.containers.push(Container::Item {
                    indent: marker.len(),
                });
                self.marker = Some(marker);
            }
            Tag::Emphasis => self.open("3"),
            Tag::Strong => self.open("1"),
            Tag::Strikethrough => self.open("9"),
            Tag::Link { dest_url, .. } => {
                self.links.push(dest_url.to_string());
                self.open("4");
            }
            Tag::Image { dest_url, .. } => {
                self.inline.push_str("[image: ");
                self.links.push(dest_url.to_string());
            }
            Tag::Table(_) => {
                self.flush_inline();
                self.block_gap();
                self.table = Some(Table {
                    rows: Vec::new(),
                    row: Vec::new(),
                    header_rows: 0,
                });
            }
            Tag::TableHead | Tag::TableRow => {
                if let Some(table) = &mut self.table {
                    table.row.clear();
                }
            }
            Tag::TableCell => self.inline.clear(),
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph => self.flush_inline(),
            TagEnd::Heading(_) => {
                self.close();
                self.flush_inline();
                self.heading = false;
            }
            TagEnd::BlockQuote(_) => {
                self.flush_inline();
                self.containers.pop();
            }
            TagEnd::CodeBlock => {
                let code = self.code.take().unwrap_or_default();
                for line in code.trim_end_matches('\n').split('\n') {
                    let prefix = self.prefix(true);
                    self.lines
                        .push(format!("{prefix}  {line}").trim_end().to_string());
                }
            }
            TagEnd::List(_) => {
                self.flush_inline();
                self.containers.pop();
            }
            TagEnd::Item => {
                self.flush_inline();
                self.containers.pop();
                self.marker = None;
            }
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough => self.close(),
            TagEnd::Link => {
                self.close();
                if let Some(url) = self.links.pop()
                    && !url.is_empty()
                    && !self.inline.ends_with(&url)
                {
                    let shown = self.style.dim(&format!(" ({url})"));
                    self.inline.push_str(&shown);
                }
            }
            TagEnd::Image => {
                self.links.pop();
                self.inline.push(']');
            }
            TagEnd::TableCell => {
                let cell = std::mem::take(&mut self.inline);
                if let Some(table) = &mut self.table {
                    table.row.push(cell.trim().to_string());
                }
            }
            TagEnd::TableHead => {
                if let Some(table) = &mut self.table {
                    let row = std::mem::take(&mut table.row);
                    table.rows.push(row);
                    table.header_rows = 1;
                }
            }
            TagEnd::TableRow => {
                if let Some(table) = &mut self.table {
                    let row = std::mem::take(&mut table.row);
                    table.rows.push(row);
                }
            }
            TagEnd::Table => {
                if let Some(table) = self.table.take() {
                    self.table_lines(table);
                }
            }
            _ => {}
        }
    }

    fn in_list(&self) -> bool {
        self.containers
            .iter()
            .any(|c| matches!(c, Container::Item { .. }))
    }

    /// A blank line before a block that follows another, except between the items of a list.
    fn block_gap(&mut self) {
        self.flush_inline();
        if self.lines.is_empty() || self.in_list() && self.marker.is_some() {
            return;
        }
        if self.lines.last().is_some_and(|l| !l.trim().is_empty()) {
            let prefix = self.prefix(false);
            self.lines.push(prefix.trim_end().to_string());
        }
    }

    fn open(&mut self, code: &'static str) {
        self.active.push(code);
        if self.style.color {
            self.inline.push_str(&format!("\x1b[{code}m"));
        }
    }

    fn close(&mut self) {
        self.active.pop();
        if self.style.color {
            self.inline.push_str("\x1b[0m");
            for code in &self.active {
                self.inline.push_str(&format!("\x1b[{code}m"));
            }
        }
    }

    /// Inline code painted, the styles around it opened again after it.
    fn with_code(&self, code: &str, text: &str) -> String {
        if !self.style.color {
            return text.to_string();
        }
        let mut painted = format!("\x1b[{code}m{text}\x1b[0m");
        for active in &self.active {
            painted.push_str(&format!("\x1b[{active}m"));
        }
        painted
    }

    /// What starts a line inside the open quotes and items: a bar per quote, the marker of an
    /// item on its first line and spaces under it after.
    fn prefix(&mut self, first: bool) -> String {
        let mut prefix = String::new();
        let innermost = self
            .containers
            .iter()
            .rposition(|c| matches!(c, Container::Item { .. }));
        for (index, container) in self.containers.iter().enumerate() {
            match container {
                Container::Quote => prefix.push_str(&self.style.dim("│ ")),
                Container::List { .. } => {}
                Container::Item { indent } => {
                    if first && Some(index) == innermost && self.marker.is_some() {
                        let marker = self.marker.take().unwrap_or_default();
                        prefix.push_str(&self.style.dim(&marker));
                    } else {
                        prefix.push_str(&" ".repeat(*indent));
                    }
                }
            }
        }
        prefix
    }

    fn flush_inline(&mut self) {
        if self.inline.trim().is_empty() && self.marker.is_none() {
            self.inline.clear();
            return;
        }
        let text = std::mem::take(&mut self.inline);
        let text = text.trim();
        let first = self.prefix(true);
        let rest = self.prefix(false);
        let available = self.columns.saturating_sub(width(&first)).max(10);
        let wrapped = wrap(text, available, "");
        for (n, line) in wrapped.into_iter().enumerate() {
            let prefix = if n == 0 { &first } else { &rest };
            self.lines
                .push(format!("{prefix}{line}").trim_end().to_string());
        }
    }

    fn table_lines(&mut self, table: Table) {
        let count = table.rows.iter().map(Vec::len).max().unwrap_or(0);
        let mut widths = vec![0; count];
        for row in &table.rows {
            for (n, cell) in row.iter().enumerate() {
                widths[n] = widths[n].max(width(cell));
            }
        }
        let total: usize = widths.iter().sum::<usize>() + count.saturating_sub(1) * 3;
        let prefix = self.prefix(false);
        for (index, row) in table.rows.iter().enumerate() {
            let cells: Vec<String> = (0..count)
                .map(|n| {
                    let cell = row.get(n).map(String::as_str).unwrap_or("");
                    let cell = if index < table.header_rows {
                        self.style.bold(cell)
                    } else {
                        cell.to_string()
                    };
                    if total <= self.columns {
                        format!("{cell}{}", " ".repeat(widths[n] - width(&cell)))
                    } else {
                        cell
                    }
                })
                .collect();
            let line = cells.join(&self.style.dim(" │ "));
            if total <= self.columns {
                self.lines
                    .push(format!("{prefix}{line}").trim_end().to_string());
            } else {
                for wrapped in wrap(&line, self.columns.saturating_sub(width(&prefix)), "  ") {
                    self.lines.push(format!("{prefix}{wrapped}"));
                }
            }
            if index + 1 == table.header_rows {
                let rule: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
                let rule = match total <= self.columns {
                    true => rule.join("─┼─"),
                    false => "─".repeat(self.columns.min(40)),
                };
                self.lines
                    .push(format!("{prefix}{}", self.style.dim(&rule)));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(markdown: &str, columns: usize) -> Vec<String> {
        let style = Style {
            color: false,
            live: true,
        };
        render(markdown, &style, columns)
    }

    #[test]
    fn paragraphs_wrap_and_blocks_are_separated() {
        let lines = plain(
            "# Title\n\nA paragraph long enough to need wrapping at thirty columns.\n\n---\n",
            30,
        );
        assert_eq!(
            lines,
            [
                "Title",
                "",
                "A paragraph long enough to",
                "need wrapping at thirty",
                "columns.",
                "",
                "────────────────────────────────────────"[..30 * 3]
                    .to_string()
                    .as_str(),
            ]
        );
    }

    #[test]
    fn lists_keep_markers_and_indent_their_wrapped_lines() {
        let lines = plain(
            "- first item\n- a second item that wraps onto another line\n  1. nested\n  2. again\n",
            24,
        );
        assert_eq!(
            lines,
            [
                "- first item",
                "- a second item that",
                "  wraps onto another",
                "  line",
                "  1. nested",
                "  2. again",
            ]
        );
    }

    #[test]
    fn code_blocks_keep_their_lines_and_tables_align() {
        let lines = plain(
            "```rust\nfn main() {\n    let x = 1;\n}\n```\n\n| a | long header |\n|---|---|\n| xyz | 1 |\n",
            40,
        );
        assert_eq!(
            lines,
            [
                "  fn main() {",
                "      let x = 1;",
                "  }",
                "",
                "a   │ long header",
                "────┼────────────",
                "xyz │ 1",
            ]
        );
    }

    #[test]
    fn inline_styles_are_coloured_when_colour_is_on() {
        let style = Style {
            color: true,
            live: true,
        };
        let lines = render(
            "Use **bold**, `code` and [a link](https://x.test).",
            &style,
            80,
        );
        assert_eq!(
            lines,
            [
                "Use \x1b[1mbold\x1b[0m, \x1b[36mcode\x1b[0m and \x1b[4ma link\x1b[0m\x1b[2m (https://x.test)\x1b[0m."
            ]
        );
    }
}
