use crate::schema::{normalize_for_providers, output_schema_for, parameters_schema_for};
use crate::suggest::closest_names;
use crate::{DirectDefinition, Tool, ToolContext, ToolEffect, ToolError};
use futures_util::future::BoxFuture;
use qilin_protocol::{CallPresentation, ContentBlock, Detail};
use serde_json::Value;
use std::collections::BTreeMap;
use std::future::Future;
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
    /// A tool's name is not one providers accept.
    #[error(
        "the tool name `{0}` is not one providers accept: use 1 to 64 ASCII letters, digits, `_` or `-`"
    )]
    InvalidName(String),
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
    name: String,
    description: String,
    prompt_hint: String,
    code_only_prompt_hint: Option<String>,
    code_mode_only: bool,
    path_arguments: &'static [&'static str],
    parameters: Value,
    output_schema: Value,
    effect: Option<ToolEffect>,
    dynamic: bool,
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
            name: T::NAME.to_string(),
            description: T::DESCRIPTION.to_string(),
            prompt_hint: tool.prompt_hint().to_string(),
            code_only_prompt_hint: tool.code_only_prompt_hint().map(str::to_string),
            code_mode_only: T::CODE_MODE_ONLY,
            path_arguments: T::PATH_ARGUMENTS,
            parameters,
            output_schema: output_schema_for::<T::Output>(),
            effect: T::READ_ONLY.then_some(ToolEffect::ReadOnly),
            dynamic: false,
            validator,
            erased: Box::new(Erased(Arc::new(tool))),
        })
    }

    fn dynamic(tool: DynamicTool) -> Result<Self, RegistryError> {
        if !valid_name(&tool.name) {
            return Err(RegistryError::InvalidName(tool.name));
        }
        let invalid = |reason: String| RegistryError::InvalidSchema {
            name: tool.name.clone(),
            reason,
        };
        if !tool.parameters.is_object() {
            return Err(invalid(format!(
                "expected a JSON object, got {}",
                tool.parameters
            )));
        }
        let validator =
            jsonschema::validator_for(&tool.parameters).map_err(|err| invalid(err.to_string()))?;
        let mut parameters = normalize_for_providers(tool.parameters);
        if let Value::Object(root) = &mut parameters {
            root.entry("type").or_insert_with(|| "object".into());
            root.entry("properties")
                .or_insert_with(|| Value::Object(Default::default()));
        }
        Ok(RegisteredTool {
            name: tool.name,
            description: tool.description,
            prompt_hint: tool.prompt_hint,
            code_only_prompt_hint: None,
            code_mode_only: tool.code_mode_only,
            path_arguments: &[],
            parameters,
            output_schema: tool.output_schema.map_or_else(
                || Value::Object(Default::default()),
                normalize_for_providers,
            ),
            effect: tool.effect,
            dynamic: true,
            validator,
            erased: Box::new(ErasedDynamic(tool.handler)),
        })
    }

    /// The wire name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The tool's doc comment.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// What the tool declares about its effects (a built-in's `read_only`, an MCP server's
    /// annotations), if anything.
    pub fn effect(&self) -> Option<ToolEffect> {
        self.effect
    }

    /// True for a tool registered at run time ([`DynamicTool`]: an MCP server's), whose
    /// definition comes from elsewhere and carries no prompt hint.
    pub fn is_dynamic(&self) -> bool {
        self.dynamic
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

    /// The output schema (`{}`, any value, for a dynamic tool that declares none).
    pub fn output_schema(&self) -> &Value {
        &self.output_schema
    }

    /// What a provider receives for this tool; `None` for a code-mode-only tool, which is
    /// never in a tools list.
    pub fn direct_definition(&self) -> Option<DirectDefinition> {
        self.definition_with_hint(&self.prompt_hint)
    }

    /// What a provider receives for this tool as a code-only agent's one entry: with its
    /// code-only prompt hint when it has one.
    pub fn code_only_definition(&self) -> Option<DirectDefinition> {
        let hint = self
            .code_only_prompt_hint
            .as_deref()
            .unwrap_or(&self.prompt_hint);
        self.definition_with_hint(hint)
    }

    fn definition_with_hint(&self, hint: &str) -> Option<DirectDefinition> {
        if self.code_mode_only {
            return None;
        }
        let hint = hint.trim();
        let description = if hint.is_empty() {
            self.description.clone()
        } else {
            format!("{}\n\n{hint}", self.description)
        };
        let mut parameters = self.parameters.clone();
        if !self.dynamic
            && let Value::Object(root) = &mut parameters
        {
            // The argument type's doc comment ("The arguments of `x`.") restates the tool's
            // description; a provider gets the description once.
            root.remove("description");
        }
        Some(DirectDefinition {
            name: self.name.clone(),
            description,
            parameters,
        })
    }

    /// How the tool presents a call with `arguments` (its verb and remark, as its call line
    /// will show), or `None` when they are not the tool's arguments (yet: a call still being
    /// written) or the tool fails to present them.
    pub fn present(&self, arguments: Value) -> Option<CallPresentation> {
        let prepared = self.erased.prepare(arguments).ok()?;
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| prepared.presentation())).ok()
    }

    /// How the tool presents a call whose argument `text` is still streaming (a JSON object's
    /// beginning): the text closed and its missing required fields given placeholders
    /// ([`crate::partial_arguments`]), so a call is named ("Search TODO") before its
    /// arguments are complete. `None` when the tool cannot present them yet.
    pub fn present_partial(&self, text: &str) -> Option<CallPresentation> {
        self.present(crate::partial_arguments(text, self.parameters()))
    }

    pub(crate) fn prepare(
        &self,
        arguments: Value,
    ) -> Result<Box<dyn PreparedCall>, serde_json::Error> {
        self.erased.prepare(arguments)
    }
}

/// Every tool a runtime knows, by wire name. Cloning it is cheap: the tools are shared, so an
/// application's registry can be added to every session's ([`ToolRegistry::extend`]).
#[derive(Default, Clone)]
pub struct ToolRegistry {
    tools: BTreeMap<String, Arc<RegisteredTool>>,
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
        self.tools
            .insert(T::NAME.to_string(), Arc::new(RegisteredTool::new(tool)?));
        Ok(())
    }

    /// Adds a tool known only at run time: its name is checked (what providers accept), its
    /// argument schema compiled, and a name already taken is an error.
    pub fn register_dynamic(&mut self, tool: DynamicTool) -> Result<(), RegistryError> {
        if self.tools.contains_key(&tool.name) {
            return Err(RegistryError::Duplicate(tool.name));
        }
        let registered = RegisteredTool::dynamic(tool)?;
        self.tools
            .insert(registered.name.clone(), Arc::new(registered));
        Ok(())
    }

    /// Adds every tool of `other` (shared, not rebuilt). A name both hold is an error, and then
    /// nothing is added.
    pub fn extend(&mut self, other: &ToolRegistry) -> Result<(), RegistryError> {
        if let Some(taken) = other.names().find(|name| self.tools.contains_key(*name)) {
            return Err(RegistryError::Duplicate(taken.to_string()));
        }
        for (name, tool) in &other.tools {
            self.tools.insert(name.clone(), Arc::clone(tool));
        }
        Ok(())
    }

    /// True when no tool is registered.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// The tool with this wire name.
    pub fn get(&self, name: &str) -> Option<&RegisteredTool> {
        self.tools.get(name).map(Arc::as_ref)
    }

    /// Every tool, sorted by wire name.
    pub fn list(&self) -> impl Iterator<Item = &RegisteredTool> {
        self.tools.values().map(Arc::as_ref)
    }

    /// Every wire name, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tools.keys().map(String::as_str)
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

/// Whether providers accept `name` as a tool name: 1 to 64 ASCII letters, digits, `_`, `-`.
fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// A tool known only at run time — an MCP server's, or one an application defines from data —
/// with its own name, JSON Schemas, description, strategy and handler. Registered with [`ToolRegistry::register_dynamic`], it
/// passes the same execution layer as a typed tool: validation against its schema, review
/// (with its declared effect), deadline and cancellation, output cap, events.
pub struct DynamicTool {
    /// The wire name (what providers accept: 1 to 64 ASCII letters, digits, `_`, `-`).
    pub name: String,
    /// What the tool does, for the model.
    pub description: String,
    /// Guidance shown when it is mounted directly; empty for none.
    pub prompt_hint: String,
    /// True when the tool is reached only from code mode.
    pub code_mode_only: bool,
    /// The JSON Schema of its arguments (validated as given; providers get it normalised).
    pub parameters: Value,
    /// The JSON Schema of its output, when known.
    pub output_schema: Option<Value>,
    /// What it declares about its effects, for review.
    pub effect: Option<ToolEffect>,
    /// Presents and runs its calls.
    pub handler: Arc<dyn DynamicHandler>,
}

impl DynamicTool {
    /// A dual-active tool named `name` doing what `description` says, taking arguments of the
    /// JSON Schema `parameters` and run by `run`, an async function of the arguments (already
    /// validated against the schema) and the call's context returning the output as JSON.
    /// The model sees the output as text (a string as itself, anything else as JSON); the
    /// card's header shows the tool's name. Set [`DynamicTool::prompt_hint`] for the tools list
    /// and [`DynamicTool::code_mode_only`] to keep it out of every tools list.
    pub fn from_fn<F, Fut>(
        name: impl Into<String>,
        description: impl Into<String>,
        parameters: Value,
        run: F,
    ) -> Self
    where
        F: Fn(Value, ToolContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Value, ToolError>> + Send + 'static,
    {
        let name = name.into();
        DynamicTool {
            description: description.into(),
            prompt_hint: String::new(),
            code_mode_only: false,
            parameters,
            output_schema: None,
            effect: None,
            handler: Arc::new(FnHandler {
                name: name.clone(),
                run: Arc::new(move |arguments, cx| Box::pin(run(arguments, cx))),
            }),
            name,
        }
    }
}

/// The function behind a [`DynamicTool::from_fn`] tool.
type DynamicFn =
    dyn Fn(Value, ToolContext) -> BoxFuture<'static, Result<Value, ToolError>> + Send + Sync;

/// Runs a [`DynamicTool::from_fn`] tool's calls with its function.
struct FnHandler {
    name: String,
    run: Arc<DynamicFn>,
}

impl DynamicHandler for FnHandler {
    fn present(&self, arguments: &Value) -> CallPresentation {
        CallPresentation::new(self.name.clone(), arguments_remark(arguments))
    }

    fn before_detail(&self, _arguments: &Value) -> Option<Detail> {
        None
    }

    fn detail(&self, _arguments: &Value, _result: &DynamicResult) -> Option<Detail> {
        None
    }

    fn call(&self, arguments: Value, cx: ToolContext) -> BoxFuture<'static, DynamicResult> {
        let running = (self.run)(arguments, cx);
        Box::pin(async move {
            let output = running.await?;
            Ok(DynamicOutput {
                content: crate::default_content(&output),
                output,
            })
        })
    }
}

/// The most characters of a call's arguments a [`DynamicTool::from_fn`] card's remark shows.
const REMARK_CHARS: usize = 80;

/// A short remark for a call's arguments: their JSON, cut to [`REMARK_CHARS`] characters.
fn arguments_remark(arguments: &Value) -> String {
    let text = arguments.to_string();
    match text.char_indices().nth(REMARK_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

/// What a dynamic tool's call produced: the value code receives, and what the model sees.
#[derive(Debug, Clone, PartialEq)]
pub struct DynamicOutput {
    /// The output as code mode receives it.
    pub output: Value,
    /// What the model sees of it.
    pub content: Vec<ContentBlock>,
}

/// What a dynamic tool's call ends with.
pub type DynamicResult = Result<DynamicOutput, ToolError>;

/// The behaviour of a [`DynamicTool`]: its presentation and its run, over JSON arguments that
/// the execution layer has already validated against the tool's schema.
pub trait DynamicHandler: Send + Sync + 'static {
    /// The card's header before the call runs.
    fn present(&self, arguments: &Value) -> CallPresentation;

    /// The detail shown while the call runs.
    fn before_detail(&self, arguments: &Value) -> Option<Detail>;

    /// The detail shown after the call ends.
    fn detail(&self, arguments: &Value, result: &DynamicResult) -> Option<Detail>;

    /// Runs the call; `cx` carries its cancellation and deadline.
    fn call(&self, arguments: Value, cx: ToolContext) -> BoxFuture<'static, DynamicResult>;
}

struct ErasedDynamic(Arc<dyn DynamicHandler>);

struct PreparedDynamic {
    handler: Arc<dyn DynamicHandler>,
    arguments: Arc<Value>,
}

impl ErasedTool for ErasedDynamic {
    fn prepare(&self, arguments: Value) -> Result<Box<dyn PreparedCall>, serde_json::Error> {
        Ok(Box::new(PreparedDynamic {
            handler: Arc::clone(&self.0),
            arguments: Arc::new(arguments),
        }))
    }
}

impl PreparedCall for PreparedDynamic {
    fn presentation(&self) -> CallPresentation {
        self.handler.present(&self.arguments)
    }

    fn before_detail(&self) -> Option<Detail> {
        self.handler.before_detail(&self.arguments)
    }

    fn run(&self, cx: ToolContext) -> BoxFuture<'static, RunResult> {
        let handler = Arc::clone(&self.handler);
        let arguments = Arc::clone(&self.arguments);
        Box::pin(async move {
            let result = handler.call(Value::clone(&arguments), cx).await;
            let detail = handler.detail(&arguments, &result);
            match result {
                Ok(done) => Ok(Ran {
                    output: done.output,
                    content: done.content,
                    detail,
                }),
                Err(error) => Err((error, detail)),
            }
        })
    }

    fn error_detail(&self, error: &ToolError) -> Option<Detail> {
        self.handler.detail(&self.arguments, &Err(error.clone()))
    }
}
