//! [`SessionDefaults`] and a new session from `POST /api/sessions`: what the request names is
//! confined to the server's folders ([`Roots`]), what it leaves out comes from the defaults, and
//! the session is built and hosted by the runtime's [`SessionHost`](qilin_runtime::SessionHost).

use crate::ServerState;
use crate::api::CreateSession;
use crate::error::ApiError;
use crate::roots::{Named, Roots};
use axum::http::StatusCode;
use qilin_runtime::{ModelChoice, SessionHandle, workspace_model, workspace_script};
use std::path::{Path, PathBuf};

/// What a session gets when the request creating it does not say.
#[derive(Debug, Clone, Default)]
pub struct SessionDefaults {
    /// The workspace.
    pub workspace: PathBuf,
    /// The agent file.
    pub agent_file: Option<PathBuf>,
    /// The model spec.
    pub model: Option<String>,
    /// Run bash commands without the sandbox (the server's `--no-sandbox`).
    pub no_sandbox: bool,
    /// Folders besides `workspace` under which a request may put a session's workspace, agent
    /// file and scripted model (`qilin serve --allow-root DIR`); a path a request names
    /// anywhere else is refused with 403.
    pub allowed_roots: Vec<PathBuf>,
}

impl SessionDefaults {
    /// The folders a request may put a session under: the workspace and the allowed roots.
    pub fn roots(&self) -> Roots {
        Roots::new(std::iter::once(self.workspace.clone()).chain(self.allowed_roots.clone()))
    }
}

/// Creates a session from `request` (its missing parts from the server's defaults) and runs it
/// in this process; `model` replaces the model the request or the defaults name.
pub async fn create(
    state: &ServerState,
    request: &CreateSession,
    model: Option<ModelChoice>,
) -> Result<SessionHandle, ApiError> {
    let defaults = state.defaults();
    let roots = state.roots();
    // What the request names must lie under the roots; the defaults are the server's own.
    let workspace = match &request.workspace {
        Some(dir) => roots.confine(&defaults.workspace.join(dir), Named::Workspace)?,
        None => defaults.workspace.clone(),
    };
    if !workspace.is_dir() {
        return Err(ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_workspace",
            format!("the workspace {} is not a folder", workspace.display()),
        ));
    }
    let agent = match (&request.agent_file, &defaults.agent_file) {
        (Some(file), _) => roots.confine(&workspace.join(file), Named::AgentFile)?,
        (None, Some(file)) => file.clone(),
        (None, None) => {
            return Err(ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "no_agent",
                "name the session's agent in `agentFile`: this server has no default agent",
            ));
        }
    };
    let host = state.host();
    let mut builder = host
        .runtime()
        .session(&workspace)
        .agent_file(agent)
        .attended(true)
        .no_sandbox(defaults.no_sandbox);
    match (model, &request.model, &defaults.model) {
        (Some(model), _, _) => builder = builder.model(model),
        (None, Some(spec), _) => builder = builder.model(requested_model(roots, &workspace, spec)?),
        (None, None, Some(spec)) => builder = builder.model(workspace_model(&workspace, spec)),
        (None, None, None) => {}
    }
    let handle = host.create(builder).await?;
    if let Some(title) = &request.title {
        state.store().rename_session(handle.id(), title).await?;
    }
    Ok(handle)
}

/// The model a request names for a session in `workspace`: a `scripted:FILE` one's file (found
/// as [`workspace_script`] finds it) must lie under `roots`, and the session reads it by its
/// resolved path.
fn requested_model(roots: &Roots, workspace: &Path, spec: &str) -> Result<ModelChoice, ApiError> {
    let Some(path) = spec.strip_prefix("scripted:") else {
        return Ok(ModelChoice::Spec(spec.to_string()));
    };
    let script = roots.confine(&workspace_script(workspace, path), Named::Script)?;
    Ok(ModelChoice::Spec(format!("scripted:{}", script.display())))
}
