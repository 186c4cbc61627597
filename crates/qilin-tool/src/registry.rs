use crate::schema::{output_schema_for, parameters_schema_for};
use crate::suggest::closest_names;
use crate::{DirectDefinition, Tool, ToolContext, ToolError};
use futures_util::future::BoxFuture;
use qilin_protocol::{CallPresentation, ContentBlock, Detail};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Why a registry operation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    /// Two tools claimed one wire name.
    #[error("two tools are named `{0}`: wire names must be unique")]
    Duplicate(String),
    /// A tool's argument schema is not a valid JSON Schema.
    #[error("the argument schema of `{name}` is not a valid JSON Schema: {reason}")]
    InvalidSchema {
        /// The tool.
        name: String,
        /// What the schema compiler said.
        reason: String,
    },
    /// A mounted name names no tool.
    #[error("no tool is named `{name}`{}", did_you_mean(.suggestions))]
    Unknown {
        /// The name asked for.
        name: String,
        /// Close names that do exist.
        suggestions: Vec<String>,
    },
}

fn did_you_mean(suggestions: &[String]) -> String {
    match suggestions {
        [] => String::new(),
        names => format!(
            "; did you mean {}?",
            names
                .iter()
                .map(|n| format!("`{n}`"))
                .collect::<Vec<_>>()
                .join(" or ")
        ),
    }
}

/// A finished run of a tool, erased: the output as JSON, what the model sees, the detail.
pub(crate) struct Ran {
    pub output: Value,
    pub content: Vec<ContentBlock>,
    pub detail: Option<Detail>,
}

/// How a tool's run ends: its output, or its error with the detail to show.
pub(crate) type RunResult = Result<Ran, (ToolError, Option<Detail>)>;

/// A call whose arguments have been decoded into the tool's type.
pub(crate) trait PreparedCall: Send + Sync {
    fn presentation(&self) -> CallPresentation;
    fn before_detail(&self) -> Option<Detail>;
    fn run(&self, cx: ToolContext) -> BoxFuture<'static, RunResult>;
    fn error_detail(&self, error: &ToolError) -> Option<Detail>;
}

trait ErasedTool: Send + Sync {
    fn prepare(&self, arguments: Value) -> Result<Box<dyn PreparedCall>, serde_json::Error>;
}

struct Erased<T: Tool>(Arc<T>);

struct Prepared<T: Tool> {
    tool: Arc<T>,
    args: Arc<T::Args>,
}

impl<T: Tool> ErasedTool for Erased<T> {
    fn prepare(&self, arguments: Value) -> Result<Box<dyn PreparedCall>, serde_json::Error> {
        let args: T::Args = serde_json::from_value(arguments)?;
        Ok(Box::new(Prepared {
            tool: Arc::clone(&self.0),
            args: Arc::new(args),
        }))
    }
}

impl<T: Tool> PreparedCall for Prepared<T> {
    fn presentation(&self) -> CallPresentation {
        self.tool.present(&self.args)
    }

    fn before_detail(&self) -> Option<Detail> {
        self.tool.before_detail(&self.args)
    }

    fn run(&self, cx: ToolContext) -> BoxFuture<'static, RunResult> {
        let tool = Arc::clone(&self.tool);
        let args = Arc::clone(&self.args);
        Box::pin(async move {
            let result = tool.call(T::Args::clone(&args), &cx).await;
            let detail = tool.detail(&args, &result);
            match result {
                Ok(output) => {
                    let content = tool.content(&output);
                    match serde_json::to_value(&output) {
                        Ok(output) => Ok(Ran {
                            output,
                            content,
                            detail,
                        }),
                        Err(err) => Err((
                            ToolError::failed(format!(
                                "the tool's output could not be encoded as JSON: {err}"
                            )),
                            detail,
                        )),
                    }
                }
                Err(error) => Err((error, detail)),
            }
        })
    }

    fn error_detail(&self, error: &ToolError) -> Option<Detail> {
        self.tool.detail(&self.args, &Err(error.clone()))
    }
}

/// One registered tool: its metadata, schemas and the erased implementation.
pub struct RegisteredTool {
    name: &'static str,
    description: &'static str,
    prompt_hint: String,
    code_mode_only: bool,
    path_arguments: &'static [&'static str],
    parameters: Value,
    output_schema: Value,
    pub(crate) validator: jsonschema::Validator,
    erased: Box<dyn ErasedTool>,
}

impl RegisteredTool {
    fn new<T: Tool>(tool: T) -> Result<Self, RegistryError> {
        let parameters = parameters_schema_for::<T::Args>();
        let validator =
            jsonschema::validator_for(&parameters).map_err(|err| RegistryError::InvalidSchema {
                name: T::NAME.to_string(),
                reason: err.to_string(),
            })?;
        Ok(RegisteredTool {
            name: T::NAME,
            description: T::DESCRIPTION,
            prompt_hint: tool.prompt_hint().to_string(),
            code_mode_only: T::CODE_MODE_ONLY,
            path_arguments: T::PATH_ARGUMENTS,
            parameters,
            output_schema: output_schema_for::<T::Output>(),
            validator,
            erased: Box::new(Erased(Arc::new(tool))),
        })
    }

    /// The wire name.
    pub fn name(&self) -> &str {
        self.name
    }

    /// The tool's doc comment.
    pub fn description(&self) -> &str {
        self.description
    }

    /// The workflow guidance shown when the tool is mounted directly.
    pub fn prompt_hint(&self) -> &str {
        &self.prompt_hint
    }

    /// True when the tool is reached only from code mode.
    pub fn code_mode_only(&self) -> bool {
        self.code_mode_only
    }

    /// The arguments holding workspace paths, dotted for nested ones.
    pub fn path_arguments(&self) -> &'static [&'static str] {
        self.path_arguments
    }

    /// `dual-active` or `code-mode-only`.
    pub fn strategy(&self) -> &'static str {
        if self.code_mode_only {
            "code-mode-only"
        } else {
            "dual-active"
        }
    }

    /// The argument schema, normalised for providers.
    pub fn parameters(&self) -> &Value {
        &self.parameters
    }

    /// The output schema.
    pub fn output_schema(&self) -> &Value {
        &self.output_schema
    }

    /// What a provider receives for this tool; `None` for a code-mode-only tool, which is
    /// never in a tools list.
    pub fn direct_definition(&self) -> Option<DirectDefinition> {
        if self.code_mode_only {
            return None;
        }
        let hint = self.prompt_hint.trim();
        let description = if hint.is_empty() {
            self.description.to_string()
        } else {
            format!("{}\n\n{hint}", self.description)
        };
        Some(DirectDefinition {
            name: self.name.to_string(),
            description,
            parameters: self.parameters.clone(),
        })
    }

    pub(crate) fn prepare(
        &self,
        arguments: Value,
    ) -> Result<Box<dyn PreparedCall>, serde_json::Error> {
        self.erased.prepare(arguments)
    }
}

/// Every tool a runtime knows, by wire name.
#[derive(Default)]
pub struct ToolRegistry {
    tools: BTreeMap<&'static str, RegisteredTool>,
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a tool; its argument schema is built and compiled once, here.
    pub fn register<T: Tool>(&mut self, tool: T) -> Result<(), RegistryError> {
        if self.tools.contains_key(T::NAME) {
            return Err(RegistryError::Duplicate(T::NAME.to_string()));
        }
        self.tools.insert(T::NAME, RegisteredTool::new(tool)?);
        Ok(())
    }

    /// The tool with this wire name.
    pub fn get(&self, name: &str) -> Option<&RegisteredTool> {
        self.tools.get(name)
    }

    /// Every tool, sorted by wire name.
    pub fn list(&self) -> impl Iterator<Item = &RegisteredTool> {
        self.tools.values()
    }

    /// Every wire name, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tools.keys().copied()
    }

    /// Registered names close to `name`, for "did you mean".
    pub fn suggest(&self, name: &str) -> Vec<String> {
        closest_names(name, self.names(), 3)
            .into_iter()
            .map(str::to_string)
            .collect()
    }

    /// The tools list for the mounted names, in their order. A code-mode-only tool is left
    /// out (it is reached through `run_code`); an unknown name is an error.
    pub fn tools_list<'a, I>(&self, mounted: I) -> Result<Vec<DirectDefinition>, RegistryError>
    where
        I: IntoIterator<Item = &'a str>,
    {
        let mut list = Vec::new();
        for name in mounted {
            let tool = self.get(name).ok_or_else(|| RegistryError::Unknown {
                name: name.to_string(),
                suggestions: self.suggest(name),
            })?;
            if let Some(definition) = tool.direct_definition()
                && !list
                    .iter()
                    .any(|d: &DirectDefinition| d.name == definition.name)
            {
                list.push(definition);
            }
        }
        Ok(list)
    }
}
