use serde::Serialize;
use serde_json::Value;

/// A tool exactly as a provider receives it in the tools list.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DirectDefinition {
    /// The wire name.
    pub name: String,
    /// The tool's description followed by its prompt hint.
    pub description: String,
    /// The parameter schema, normalised for providers.
    pub parameters: Value,
}
