//! The user's settings: `config.toml` in Qilin's folder of the platform's configuration place
//! (`~/.config/qilin/config.toml` on Linux, or the file `QILIN_CONFIG` names), and the
//! environment: the default model, and the models' prices (for the cost of a turn).

use anyhow::{Context, Result};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// What `config.toml` may hold.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    /// The model of a session whose agent names none: `openai:NAME`, `anthropic:NAME` or
    /// `scripted:FILE`.
    pub model: Option<String>,
    /// Prices per million tokens, by `provider/model` (`[prices."openai/NAME"]`).
    #[serde(default)]
    pub prices: BTreeMap<String, Price>,
}

/// A model's price per million tokens, in US dollars.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    /// Per million input tokens.
    pub input: f64,
    /// Per million output tokens.
    pub output: f64,
    /// Per million input tokens served from the provider's cache; the input price when unset.
    pub cached_input: Option<f64>,
}

impl Price {
    /// What `usage` costs: its cached input at the cached price, the rest of its input at the
    /// input price, its output at the output price.
    pub fn cost(&self, usage: &qilin_protocol::Usage) -> f64 {
        let cached = usage.cache_read_tokens.min(usage.input_tokens);
        let fresh = usage.input_tokens - cached;
        (fresh as f64 * self.input
            + cached as f64 * self.cached_input.unwrap_or(self.input)
            + usage.output_tokens as f64 * self.output)
            / 1_000_000.0
    }

    /// The first field that is not a price (negative, or not a number), if any.
    fn invalid_field(&self) -> Option<&'static str> {
        let bad = |value: f64| !value.is_finite() || value < 0.0;
        if bad(self.input) {
            Some("input")
        } else if bad(self.output) {
            Some("output")
        } else if self.cached_input.is_some_and(bad) {
            Some("cached_input")
        } else {
            None
        }
    }
}

/// The key of `[prices]` for a model spec: `openai:gpt-4.1` → `openai/gpt-4.1`.
pub fn price_key(spec: &str) -> String {
    spec.replacen(':', "/", 1)
}

/// A cost in US dollars: `$0.0123` below a dollar, `$1.23` from one on.
pub fn dollars(cost: f64) -> String {
    if cost < 1.0 {
        format!("${cost:.4}")
    } else {
        format!("${cost:.2}")
    }
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
                "{} is not a valid Qilin configuration (expected e.g. `model = \"openai:NAME\"` \
                 and `[prices.\"openai/NAME\"]` tables of `input`, `output` and `cached_input`)",
                file_path.display()
            )
        })?;
        for (model, price) in &file.prices {
            if let Some(field) = price.invalid_field() {
                anyhow::bail!(
                    "{}: [prices.\"{model}\"] {field} must be a price per million tokens (a number, \
                     0 or more)",
                    file_path.display()
                );
            }
        }
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

    /// The price of the model `spec` (`openai:NAME`), if the configuration file gives one.
    pub fn price(&self, spec: &str) -> Option<Price> {
        self.file.prices.get(&price_key(spec)).copied()
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
    if settings.file.prices.is_empty() {
        println!(
            "prices: none; a turn's cost shows once the config file prices its model, e.g. \
             `[prices.\"openai/NAME\"]` with `input = 2.0`, `output = 8.0`, `cached_input = 0.5` \
             (US dollars per million tokens)"
        );
    } else {
        println!("prices (US dollars per million tokens):");
        for (model, price) in &settings.file.prices {
            let cached = price
                .cached_input
                .map(|cached| format!(" · cached input {cached}"))
                .unwrap_or_default();
            println!(
                "  {model}: input {}{cached} · output {}",
                price.input, price.output
            );
        }
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

    #[test]
    fn a_price_costs_cached_input_apart_and_bad_prices_are_named() {
        let file: ConfigFile = toml::from_str(
            "[prices.\"openai/m\"]\ninput = 2.0\noutput = 8.0\ncached_input = 0.5\n\
             [prices.\"anthropic/n\"]\ninput = 3\noutput = 15\n",
        )
        .unwrap();
        let usage = qilin_protocol::Usage {
            input_tokens: 1_000_000,
            output_tokens: 100_000,
            cache_read_tokens: 400_000,
            cache_write_tokens: 0,
        };
        let price = file.prices[&price_key("openai:m")];
        // 600k fresh at 2.0, 400k cached at 0.5, 100k out at 8.0.
        assert!((price.cost(&usage) - (1.2 + 0.2 + 0.8)).abs() < 1e-9);
        let uncached = file.prices[&price_key("anthropic:n")];
        assert!((uncached.cost(&usage) - (3.0 + 1.5)).abs() < 1e-9);
        assert_eq!(dollars(0.01234), "$0.0123");
        assert_eq!(dollars(12.345), "$12.35");
        let negative: ConfigFile =
            toml::from_str("[prices.\"x/y\"]\ninput = -1\noutput = 1\n").unwrap();
        assert_eq!(negative.prices["x/y"].invalid_field(), Some("input"));
        let misspelled =
            toml::from_str::<ConfigFile>("[prices.\"x/y\"]\ninput = 1\nouput = 1\n").unwrap_err();
        assert!(misspelled.to_string().contains("ouput"), "{misspelled}");
    }
}
