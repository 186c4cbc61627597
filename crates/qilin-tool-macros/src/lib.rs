//! `#[derive(Tool)]`: a tool's wire name, description and strategy from its declaration.
//!
//! ```ignore
//! /// Search file contents with a regular expression.
//! #[derive(Tool)]
//! #[tool(name = "grep", read_only, paths = ["path"])]  // or #[tool(name = "crm_lookup", code_mode_only)]
//! pub struct Grep;
//! ```
//!
//! The doc comment becomes the tool's description; the macro implements
//! `qilin_tool::ToolInfo`, and the author implements `qilin_tool::Tool`. `paths` names the
//! arguments that hold workspace paths (dotted for nested ones, `edits.path`): the execution
//! layer replaces each by its canonical workspace-relative form before review. `read_only`
//! declares that the tool changes nothing: its calls may run beside the other read-only calls
//! of a step, and review rules naming `effect: read_only` match it.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

use proc_macro::TokenStream;
use quote::quote;
use syn::{Attribute, DeriveInput, Expr, Lit, LitStr, Meta, parse_macro_input};

/// Implements `qilin_tool::ToolInfo` from
/// `#[tool(name = "...", code_mode_only, read_only, paths = [...])]` and the doc comment.
#[proc_macro_derive(Tool, attributes(tool))]
pub fn derive_tool(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    match expand(&input, quote!(::qilin_tool)) {
        Ok(tokens) => tokens.into(),
        Err(err) => err.to_compile_error().into(),
    }
}

/// The same derive for an application that depends on the `qilin` facade crate alone: its
/// expansion names `::qilin::tool::ToolInfo`. The facade re-exports it as `qilin::Tool`.
#[proc_macro_derive(FacadeTool, attributes(tool))]
pub fn derive_facade_tool(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    match expand(&input, quote!(::qilin::tool)) {
        Ok(tokens) => tokens.into(),
        Err(err) => err.to_compile_error().into(),
    }
}

/// The `ToolInfo` impl of `input`, naming the trait through `tool_crate`.
fn expand(
    input: &DeriveInput,
    tool_crate: proc_macro2::TokenStream,
) -> syn::Result<proc_macro2::TokenStream> {
    let mut name: Option<LitStr> = None;
    let mut code_mode_only = false;
    let mut read_only = false;
    let mut paths: Vec<LitStr> = Vec::new();
    for attr in input.attrs.iter().filter(|a| a.path().is_ident("tool")) {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("name") {
                name = Some(meta.value()?.parse()?);
                Ok(())
            } else if meta.path.is_ident("code_mode_only") {
                code_mode_only = flag(&meta, "code_mode_only")?;
                Ok(())
            } else if meta.path.is_ident("read_only") {
                read_only = flag(&meta, "read_only")?;
                Ok(())
            } else if meta.path.is_ident("paths") {
                let list: syn::ExprArray = meta.value()?.parse()?;
                for element in list.elems {
                    match element {
                        Expr::Lit(syn::ExprLit {
                            lit: Lit::Str(text),
                            ..
                        }) => paths.push(text),
                        other => {
                            return Err(syn::Error::new_spanned(
                                other,
                                "`paths` lists argument names as strings: paths = [\"path\"]",
                            ));
                        }
                    }
                }
                Ok(())
            } else {
                Err(meta.error(
                    "expected `name = \"...\"`, `code_mode_only`, `read_only` or `paths = [\"...\"]`",
                ))
            }
        })?;
    }
    let name = name.ok_or_else(|| {
        syn::Error::new_spanned(
            &input.ident,
            "a tool needs its wire name: #[tool(name = \"my_tool\")]",
        )
    })?;
    check_wire_name(&name)?;
    let description = doc_comment(&input.attrs);
    if description.is_empty() {
        return Err(syn::Error::new_spanned(
            &input.ident,
            "a tool's doc comment is its description for the model: add `/// What this tool does.`",
        ));
    }
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    Ok(quote! {
        impl #impl_generics #tool_crate::ToolInfo for #ident #ty_generics #where_clause {
            const NAME: &'static str = #name;
            const DESCRIPTION: &'static str = #description;
            const CODE_MODE_ONLY: bool = #code_mode_only;
            const READ_ONLY: bool = #read_only;
            const PATH_ARGUMENTS: &'static [&'static str] = &[#(#paths),*];
        }
    })
}

/// The value of the flag `name`: `true` when written alone, else the `= true` or `= false`
/// after it.
fn flag(meta: &syn::meta::ParseNestedMeta<'_>, name: &str) -> syn::Result<bool> {
    if !meta.input.peek(syn::Token![=]) {
        return Ok(true);
    }
    let value: Expr = meta.value()?.parse()?;
    match value {
        Expr::Lit(syn::ExprLit {
            lit: Lit::Bool(flag),
            ..
        }) => Ok(flag.value),
        other => Err(syn::Error::new_spanned(
            other,
            format!("`{name}` is a flag: write `{name}` alone, or `{name} = true` or `false`"),
        )),
    }
}

fn check_wire_name(name: &LitStr) -> syn::Result<()> {
    let value = name.value();
    let valid = value.len() <= 64
        && value.starts_with(|c: char| c.is_ascii_lowercase())
        && value
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if valid {
        Ok(())
    } else {
        Err(syn::Error::new_spanned(
            name,
            "a wire name is 1-64 characters of a-z, 0-9 and `_`, starting with a letter",
        ))
    }
}

/// The `///` lines joined with newlines, one leading space removed from each, trimmed.
fn doc_comment(attrs: &[Attribute]) -> String {
    let lines: Vec<String> = attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            Meta::NameValue(nv) => match &nv.value {
                Expr::Lit(expr) => match &expr.lit {
                    Lit::Str(s) => Some(s.value()),
                    _ => None,
                },
                _ => None,
            },
            _ => None,
        })
        .map(|line| {
            line.strip_prefix(' ')
                .unwrap_or(&line)
                .trim_end()
                .to_string()
        })
        .collect();
    lines.join("\n").trim().to_string()
}
