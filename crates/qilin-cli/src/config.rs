//! The user's settings: `config.toml` in Qilin's folder of the platform's configuration place
//! (`~/.config/qilin/config.toml` on Linux, or the file `QILIN_CONFIG` names), and the
//! environment. Today it names the default model.

use anyhow::{Context, Result};
use serde::Deserialize;
use std::path::PathBuf;

/// What `config.toml` may hold.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// The model of a session whose agent names none: `openai:NAME`, `anthropic:NAME` or
    /// `scripted:FILE`.
    pub model: Option<String>,
}

/// The settings found: the configuration file (if any) and the environment.
#[derive(Debug)]
pub struct Settings {
    /// Where the configuration file is looked for.
    pub path: Option<PathBuf>,
    /// Whether it exists.
    pub found: bool,
    /// What it holds.
    pub file: ConfigFile,
}

/// The model to use when neither `--model` nor the agent names one, and where it was set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DefaultModel {
    /// The model spec.
    pub spec: String,
    /// Where it was set: `QILIN_MODEL` or the configuration file's path.
    pub source: String,
}

/// The path of the configuration file: `QILIN_CONFIG`, else the platform's place.
pub fn config_path() -> Option<PathBuf> {
    match std::env::var_os("QILIN_CONFIG") {
        Some(path) if !path.is_empty() => Some(PathBuf::from(path)),
        _ => dirs::config_dir().map(|dir| dir.join("qilin").join("config.toml")),
    }
}

impl Settings {
    /// Reads the configuration file; a missing file is no configuration, a malformed one an
    /// error naming the file and what is wrong.
    pub fn load() -> Result<Self> {
        let path = config_path();
        let Some(file_path) = &path else {
            return Ok(Settings {
                path,
                found: false,
                file: ConfigFile::default(),
            });
        };
        let text = match std::fs::read_to_string(file_path) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Settings {
                    path,
                    found: false,
                    file: ConfigFile::default(),
                });
            }
            Err(err) => {
                return Err(err).with_context(|| format!("cannot read {}", file_path.display()));
            }
        };
        let file: ConfigFile = toml::from_str(&text).with_context(|| {
            format!(
                "{} is not a valid Qilin configuration (expected e.g. `model = \"openai:NAME\"`)",
                file_path.display()
            )
        })?;
        Ok(Settings {
            path,
            found: true,
            file,
        })
    }

    /// `QILIN_MODEL`, else the configuration file's `model`.
    pub fn default_model(&self) -> Option<DefaultModel> {
        if let Ok(spec) = std::env::var("QILIN_MODEL")
            && !spec.trim().is_empty()
        {
            return Some(DefaultModel {
                spec: spec.trim().to_string(),
                source: "QILIN_MODEL".to_string(),
            });
        }
        let spec = self.file.model.as_deref()?.trim();
        (!spec.is_empty()).then(|| DefaultModel {
            spec: spec.to_string(),
            source: self
                .path
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
        })
    }

    /// Where the configuration file is, for messages.
    pub fn shown_path(&self) -> String {
        self.path.as_ref().map_or_else(
            || "~/.config/qilin/config.toml".to_string(),
            |p| p.display().to_string(),
        )
    }
}

/// `qilin config`: where the configuration is read from and the model it gives.
pub fn show() -> Result<std::process::ExitCode> {
    let settings = Settings::load()?;
    let state = if settings.found { "" } else { " (not found)" };
    println!("config file: {}{state}", settings.shown_path());
    match settings.default_model() {
        Some(model) => println!("model: {} (from {})", model.spec, model.source),
        None => println!(
            "model: none; add `model = \"openai:NAME\"` (or `anthropic:NAME`) to the config file, \
             or set QILIN_MODEL"
        ),
    }
    Ok(std::process::ExitCode::SUCCESS)
}

/// The three lines a first run without any model reads.
pub fn no_model_help(settings: &Settings) -> String {
    format!(
        "no model is configured.\n  \
         Put `model = \"anthropic:NAME\"` (with ANTHROPIC_API_KEY set) or `model = \"openai:NAME\"` \
         (with OPENAI_API_KEY) in {}, set QILIN_MODEL, or pass --model.\n  \
         Or run `qilin demo` to see Qilin at work with no key.",
        settings.shown_path()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_file_names_a_model_and_nothing_unknown() {
        let file: ConfigFile = toml::from_str("model = \"openai:gpt-4.1\"\n").unwrap();
        assert_eq!(file.model.as_deref(), Some("openai:gpt-4.1"));
        let err = toml::from_str::<ConfigFile>("modle = \"x\"\n").unwrap_err();
        assert!(err.to_string().contains("modle"), "{err}");
    }
}
