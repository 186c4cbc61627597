use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// One piece of what a tool returns to the model (and shows to the client).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum ContentBlock {
    /// Plain text.
    Text {
        /// The text itself.
        text: String,
    },
    /// An image, base64-encoded.
    #[serde(rename_all = "camelCase")]
    Image {
        /// The media type, e.g. `image/png`.
        media_type: String,
        /// The image bytes, base64 (standard alphabet, padded).
        data: String,
    },
    /// A structured JSON value.
    Json {
        /// The value.
        #[ts(type = "unknown")]
        value: serde_json::Value,
    },
}

impl ContentBlock {
    /// A text block.
    pub fn text(text: impl Into<String>) -> Self {
        ContentBlock::Text { text: text.into() }
    }
}
