//! Choosing a provider from a model spec: `openai:NAME`, `anthropic:NAME`, `scripted:FILE`.

use crate::{
    AnthropicConfig, AnthropicProvider, ModelError, ModelProvider, OpenAiConfig, OpenAiProvider,
    ScriptError, ScriptedProvider,
};
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Arc;

const EXPECTED: &str = "expected openai:NAME, anthropic:NAME or scripted:FILE";

/// A parsed model spec.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelSpec {
    /// `openai:NAME`: an OpenAI-compatible server (`OPENAI_BASE_URL`, `OPENAI_API_KEY`).
    OpenAi {
        /// The model name.
        model: String,
    },
    /// `anthropic:NAME`: the Messages API (`ANTHROPIC_BASE_URL`, `ANTHROPIC_API_KEY`).
    Anthropic {
        /// The model name.
        model: String,
    },
    /// `scripted:FILE`: the scripted model playing a YAML script.
    Scripted {
        /// The script file.
        path: PathBuf,
    },
}

/// A provider ready to use and the model name to put in its requests.
#[derive(Clone)]
pub struct SelectedModel {
    /// The provider.
    pub provider: Arc<dyn ModelProvider>,
    /// The model name for [`crate::ModelRequest::model`] (the script's path for a script).
    pub model: String,
}

impl fmt::Debug for SelectedModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SelectedModel")
            .field("model", &self.model)
            .finish_non_exhaustive()
    }
}

/// Why a model spec could not become a provider.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectError {
    /// The spec is not one of the three forms.
    #[error("model `{spec}`: {reason}")]
    Spec {
        /// The spec as given.
        spec: String,
        /// What is wrong and what is expected.
        reason: String,
    },
    /// The provider is not configured (e.g. a missing API key).
    #[error(transparent)]
    Provider(#[from] ModelError),
    /// The script could not be loaded.
    #[error(transparent)]
    Script(#[from] ScriptError),
}

impl FromStr for ModelSpec {
    type Err = SelectError;

    fn from_str(spec: &str) -> Result<Self, SelectError> {
        let fail = |reason: String| SelectError::Spec {
            spec: spec.to_owned(),
            reason,
        };
        let Some((provider, name)) = spec.split_once(':') else {
            return Err(fail(format!("names no provider; {EXPECTED}")));
        };
        let name = name.trim();
        if name.is_empty() {
            return Err(fail(format!(
                "has no {} after `{provider}:`; {EXPECTED}",
                if provider == "scripted" {
                    "file"
                } else {
                    "model name"
                }
            )));
        }
        match provider.trim() {
            "openai" => Ok(ModelSpec::OpenAi { model: name.into() }),
            "anthropic" => Ok(ModelSpec::Anthropic { model: name.into() }),
            "scripted" => Ok(ModelSpec::Scripted { path: name.into() }),
            other => Err(fail(format!("unknown provider `{other}`; {EXPECTED}"))),
        }
    }
}

impl ModelSpec {
    /// Builds the provider, reading its settings from the process environment.
    pub fn connect(&self) -> Result<SelectedModel, SelectError> {
        self.connect_with(|name| std::env::var(name).ok())
    }

    /// Builds the provider, reading its settings through `lookup` (e.g. a config file layered
    /// over the environment).
    pub fn connect_with(
        &self,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<SelectedModel, SelectError> {
        Ok(match self {
            ModelSpec::OpenAi { model } => SelectedModel {
                provider: Arc::new(OpenAiProvider::new(OpenAiConfig::from_lookup(lookup)?)?),
                model: model.clone(),
            },
            ModelSpec::Anthropic { model } => SelectedModel {
                provider: Arc::new(AnthropicProvider::new(AnthropicConfig::from_lookup(
                    lookup,
                )?)?),
                model: model.clone(),
            },
            ModelSpec::Scripted { path } => SelectedModel {
                provider: Arc::new(ScriptedProvider::from_file(path)?),
                model: path.display().to_string(),
            },
        })
    }
}

/// Parses `spec` and builds its provider from the process environment.
pub fn select_model(spec: &str) -> Result<SelectedModel, SelectError> {
    spec.parse::<ModelSpec>()?.connect()
}
