//! MCP servers as agent files and the workspace declare them: `mcp_servers:` in an `.agent`
//! file, and the workspace's `.qilin/mcp.yaml` (same shape), which agents name by reference.
//!
//! ```yaml
//! mcp_servers:
//!   files:                      # a stdio server: a command Qilin starts
//!     command: npx
//!     args: [-y, "@modelcontextprotocol/server-filesystem", "."]
//!     env: {LOG_LEVEL: warn}    # values may read Qilin's environment: "${NAME}"
//!   docs:                       # a streamable HTTP server
//!     url: https://example.com/mcp
//!     headers: {Authorization: "Bearer ${DOCS_TOKEN}"}
//!     direct: [search]          # tools also mounted directly (dual-active)
//!   github: {}                  # declared in .qilin/mcp.yaml
//! ```

use crate::yaml::{KnownKeys, Segment, Source};
use crate::{Diagnostic, DiagnosticKind, agent_workspace};
use qilin_sandbox::{CONFIG_FILE_LIMIT, read_own_text};
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The workspace's file of MCP servers, relative to the workspace.
pub const MCP_WORKSPACE_FILE: &str = ".qilin/mcp.yaml";

/// How long a server may take to start and answer `initialize` when its declaration sets no
/// `startup_timeout_ms`.
pub const DEFAULT_MCP_STARTUP: Duration = Duration::from_secs(30);

/// The longest server name: with `__` and a tool name it must fit a provider's 64 characters.
pub const MAX_SERVER_NAME_CHARS: usize = 24;

/// The keys a server declaration reads.
pub(crate) const SERVER_KEYS: &[&str] = &[
    "command",
    "args",
    "env",
    "cwd",
    "url",
    "headers",
    "direct",
    "startup_timeout_ms",
];

const WORKSPACE_KEYS: KnownKeys = &[("", &["mcp_servers"]), ("mcp_servers.*", SERVER_KEYS)];

/// One server's declaration as written.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize, Serialize)]
pub struct McpServerConfig {
    /// The program of a stdio server (a name on `PATH`, or a path relative to the workspace).
    pub command: Option<String>,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Variables set for it, beyond the few it inherits (`PATH`, `HOME`, ...); a value may
    /// hold `${NAME}`, read from Qilin's environment.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// The folder it runs in, relative to the workspace (the workspace by default).
    pub cwd: Option<String>,
    /// The endpoint of a streamable HTTP server.
    pub url: Option<String>,
    /// Headers sent to an HTTP server; a value may hold `${NAME}`, read from Qilin's
    /// environment (tokens stay out of the file).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// The server's tools (by their own names) also mounted directly, in the model's tools
    /// list: dual-active. Every other tool is code-mode-only.
    #[serde(default)]
    pub direct: Vec<String>,
    /// How long it may take to start and answer `initialize`, in milliseconds.
    pub startup_timeout_ms: Option<u64>,
}

/// How Qilin reaches a server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum McpTransport {
    /// A program Qilin starts, speaking MCP on its stdin and stdout.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables set for it (values may hold `${NAME}`).
        env: BTreeMap<String, String>,
        /// The folder it runs in.
        cwd: PathBuf,
    },
    /// A streamable HTTP endpoint.
    Http {
        /// The URL.
        url: String,
        /// Headers sent with every request (values may hold `${NAME}`).
        headers: BTreeMap<String, String>,
    },
}

/// A declared MCP server, resolved: its name, how to reach it, which tools are mounted
/// directly, and where it was declared.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct McpServer {
    /// The server's name, the prefix of its tools' names (`name__tool`).
    pub name: String,
    /// How Qilin reaches it.
    pub transport: McpTransport,
    /// Its tools mounted directly (their own names).
    pub direct: Vec<String>,
    /// How long it may take to start.
    #[serde(skip)]
    pub startup_timeout: Duration,
    /// The file that declares it (the agent file, or the workspace's `.qilin/mcp.yaml`).
    pub declared_in: PathBuf,
    /// The workspace it works in.
    pub workspace: PathBuf,
}

/// `mcp_servers:` as written: a mapping of names to declarations (an empty one refers to the
/// workspace's server of that name), or a list of the workspace's server names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RawMcpServers(pub Vec<(String, McpServerConfig)>);

impl<'de> Deserialize<'de> for RawMcpServers {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ServersVisitor;
        impl<'de> Visitor<'de> for ServersVisitor {
            type Value = RawMcpServers;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a mapping of server names to declarations, or a list of names")
            }
            fn visit_unit<E: de::Error>(self) -> Result<RawMcpServers, E> {
                Ok(RawMcpServers::default())
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<RawMcpServers, A::Error> {
                let mut servers = Vec::new();
                while let Some(name) = seq.next_element::<String>()? {
                    servers.push((name, McpServerConfig::default()));
                }
                Ok(RawMcpServers(servers))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<RawMcpServers, A::Error> {
                let mut servers = Vec::new();
                while let Some(name) = map.next_key::<String>()? {
                    let config = map.next_value::<Option<McpServerConfig>>()?;
                    servers.push((name, config.unwrap_or_default()));
                }
                Ok(RawMcpServers(servers))
            }
        }
        deserializer.deserialize_any(ServersVisitor)
    }
}

#[derive(Deserialize, Default)]
struct RawWorkspaceFile {
    #[serde(default)]
    mcp_servers: RawMcpServers,
}

#[derive(Deserialize, Default)]
struct RawAgentServers {
    #[serde(default)]
    mcp_servers: RawMcpServers,
}

fn key(name: &str) -> Segment {
    Segment::Key(name.to_string())
}

/// What is wrong with a server name, if anything.
fn name_problem(name: &str) -> Option<String> {
    if name.is_empty() || name.len() > MAX_SERVER_NAME_CHARS {
        return Some(format!(
            "must be 1 to {MAX_SERVER_NAME_CHARS} characters (its tools are named `{name}__TOOL`, which must fit 64)"
        ));
    }
    if !name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        return Some("may hold only ASCII letters, digits, `_` and `-`".to_string());
    }
    if name.contains("__") || name.starts_with('_') || name.ends_with('_') {
        return Some(
            "may not hold `__` nor start or end with `_` (`__` separates the server from the tool in `server__tool`)"
                .to_string(),
        );
    }
    None
}

/// Checks one declaration and resolves it; `at` is its path in the file for line numbers.
fn resolve(
    name: &str,
    config: &McpServerConfig,
    source: &Source,
    at: &[Segment],
    workspace: &Path,
    errors: &mut Vec<Diagnostic>,
) -> Option<McpServer> {
    let line = source.line_of(at);
    let mut fail = |message: String| {
        errors.push(Diagnostic::error(
            DiagnosticKind::InvalidMcpServer,
            source.path,
            line,
            message,
        ));
    };
    if let Some(problem) = name_problem(name) {
        fail(format!("MCP server name `{name}` {problem}"));
        return None;
    }
    let transport = match (&config.command, &config.url) {
        (Some(command), None) if !command.trim().is_empty() => McpTransport::Stdio {
            command: command.clone(),
            args: config.args.clone(),
            env: config.env.clone(),
            cwd: match &config.cwd {
                Some(cwd) => workspace.join(cwd),
                None => workspace.to_path_buf(),
            },
        },
        (None, Some(url)) if url.starts_with("http://") || url.starts_with("https://") => {
            McpTransport::Http {
                url: url.clone(),
                headers: config.headers.clone(),
            }
        }
        (None, Some(url)) => {
            fail(format!(
                "MCP server `{name}`: `url: {url}` is not an http:// or https:// URL"
            ));
            return None;
        }
        (Some(_), Some(_)) => {
            fail(format!(
                "MCP server `{name}` has both `command` and `url`; keep `command` for a server Qilin starts, `url` for a streamable HTTP one"
            ));
            return None;
        }
        _ => {
            fail(format!(
                "MCP server `{name}` has no `command` (a stdio server) nor `url` (a streamable HTTP server)"
            ));
            return None;
        }
    };
    if matches!(transport, McpTransport::Stdio { .. }) && !config.headers.is_empty() {
        fail(format!(
            "MCP server `{name}`: `headers` are for an HTTP server (`url`); a stdio server takes `env`"
        ));
    }
    Some(McpServer {
        name: name.to_string(),
        transport,
        direct: config.direct.clone(),
        startup_timeout: config
            .startup_timeout_ms
            .map_or(DEFAULT_MCP_STARTUP, Duration::from_millis),
        declared_in: source.path.to_path_buf(),
        workspace: workspace.to_path_buf(),
    })
}

/// The servers the workspace's `.qilin/mcp.yaml` declares (none when it has no such file),
/// with every error found and its unknown keys as warnings.
pub fn workspace_mcp_servers(workspace: &Path) -> (Vec<McpServer>, Vec<Diagnostic>) {
    let path = workspace.join(MCP_WORKSPACE_FILE);
    let text = match read_own_text(&path, CONFIG_FILE_LIMIT) {
        Ok(text) => text,
        Err(err) if err.is_not_found() => return (Vec::new(), Vec::new()),
        Err(err) => {
            let error = Diagnostic::error(
                DiagnosticKind::InvalidMcpServer,
                &path,
                None,
                format!("the MCP servers file could not be read: {err}"),
            );
            return (Vec::new(), vec![error]);
        }
    };
    let source = Source {
        path: &path,
        text: &text,
        line_offset: 0,
    };
    let (raw, mut diagnostics): (RawWorkspaceFile, _) = match source.parse(WORKSPACE_KEYS) {
        Ok(parsed) => parsed,
        Err(error) => return (Vec::new(), vec![error]),
    };
    let mut servers = Vec::new();
    for (name, config) in &raw.mcp_servers.0 {
        let at = [key("mcp_servers"), key(name)];
        if let Some(server) = resolve(name, config, &source, &at, workspace, &mut diagnostics) {
            servers.push(server);
        }
    }
    (servers, diagnostics)
}

/// Resolves an agent file's `mcp_servers` (a declaration of its own, or a reference to the
/// workspace's of that name, whose `direct` it may replace); errors are added to `errors`.
pub(crate) fn agent_mcp_servers(
    raw: &RawMcpServers,
    source: &Source,
    errors: &mut Vec<Diagnostic>,
) -> Vec<McpServer> {
    if raw.0.is_empty() {
        return Vec::new();
    }
    let workspace = agent_workspace(source.path);
    let (declared, problems) = workspace_mcp_servers(&workspace);
    errors.extend(problems.into_iter().filter(Diagnostic::is_error));
    let mut servers: Vec<McpServer> = Vec::new();
    for (name, config) in &raw.0 {
        let at = [key("mcp_servers"), key(name)];
        if servers.iter().any(|server| &server.name == name) {
            errors.push(Diagnostic::error(
                DiagnosticKind::InvalidMcpServer,
                source.path,
                source.line_of(&at),
                format!("MCP server `{name}` is listed twice; keep one"),
            ));
            continue;
        }
        let refers = config.command.is_none() && config.url.is_none();
        let server = if refers {
            match declared.iter().find(|server| &server.name == name) {
                Some(server) => {
                    let mut server = server.clone();
                    if !config.direct.is_empty() {
                        server.direct = config.direct.clone();
                    }
                    Some(server)
                }
                None => {
                    let known: Vec<String> =
                        declared.iter().map(|s| format!("`{}`", s.name)).collect();
                    errors.push(Diagnostic::error(
                        DiagnosticKind::InvalidMcpServer,
                        source.path,
                        source.line_of(&at),
                        format!(
                            "MCP server `{name}` has no `command` or `url`, and {MCP_WORKSPACE_FILE} declares no server of that name{}; declare it here or there",
                            if known.is_empty() {
                                String::new()
                            } else {
                                format!(" (it declares {})", known.join(", "))
                            }
                        ),
                    ));
                    None
                }
            }
        } else {
            resolve(name, config, source, &at, &workspace, errors)
        };
        servers.extend(server);
    }
    servers
}

/// The MCP servers an agent file uses, read ahead of loading it (a session connects to them
/// first, so their generated skills are there when the agent's skills are checked). Errors
/// here are reported again, with the rest, when the agent loads.
pub fn declared_mcp_servers(agent_file: &Path) -> Result<Vec<McpServer>, Vec<Diagnostic>> {
    let text = read_own_text(agent_file, CONFIG_FILE_LIMIT).map_err(|err| {
        vec![Diagnostic::error(
            DiagnosticKind::InvalidAgent,
            agent_file,
            None,
            format!("the agent file could not be read: {err}"),
        )]
    })?;
    declared_mcp_servers_in(agent_file, &text)
}

/// As [`declared_mcp_servers`], for an agent file's `text` (named `agent_file` in findings;
/// its `mcp_servers` are found as that file's would be).
pub fn declared_mcp_servers_in(
    agent_file: &Path,
    text: &str,
) -> Result<Vec<McpServer>, Vec<Diagnostic>> {
    let source = Source {
        path: agent_file,
        text,
        line_offset: 0,
    };
    let deserializer = serde_yaml_ng::Deserializer::from_str(text);
    let raw = RawAgentServers::deserialize(deserializer).unwrap_or_default();
    let mut errors = Vec::new();
    let servers = agent_mcp_servers(&raw.mcp_servers, &source, &mut errors);
    if errors.is_empty() {
        Ok(servers)
    } else {
        Err(errors)
    }
}

/// The name of the skill generated for server `server`: `mcp-` and the name in lower case
/// with `_` as `-` (skill names are lower case with hyphens).
pub fn mcp_skill_name(server: &str) -> String {
    format!("mcp-{}", server.to_ascii_lowercase().replace('_', "-"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, path: &str, text: &str) -> PathBuf {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn an_agent_declares_servers_and_refers_to_the_workspaces() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            MCP_WORKSPACE_FILE,
            "mcp_servers:\n  github:\n    url: https://example.com/mcp\n    headers:\n      Authorization: Bearer ${TOKEN}\n",
        );
        let agent = write(
            dir.path(),
            "a.agent",
            "name: a\ninstructions: hi\nmcp_servers:\n  files:\n    command: node\n    args: [server.js]\n    direct: [read_file]\n  github:\n    direct: [search]\n",
        );
        let servers = declared_mcp_servers(&agent).unwrap();
        assert_eq!(servers.len(), 2);
        assert_eq!(servers[0].name, "files");
        assert_eq!(servers[0].direct, vec!["read_file"]);
        let McpTransport::Stdio { cwd, .. } = &servers[0].transport else {
            panic!("stdio expected")
        };
        assert_eq!(cwd, &dir.path().to_path_buf());
        assert_eq!(servers[1].direct, vec!["search"]);
        assert!(matches!(servers[1].transport, McpTransport::Http { .. }));
        assert!(servers[1].declared_in.ends_with(MCP_WORKSPACE_FILE));
    }

    #[test]
    fn bad_declarations_name_the_server_and_line() {
        let dir = tempfile::tempdir().unwrap();
        let agent = write(
            dir.path(),
            "a.agent",
            "name: a\ninstructions: hi\nmcp_servers:\n  both:\n    command: x\n    url: https://x\n  bad__name:\n    command: x\n  missing: {}\n  ftp:\n    url: ftp://x\n",
        );
        let errors = declared_mcp_servers(&agent).unwrap_err();
        let messages: Vec<String> = errors
            .iter()
            .map(|e| format!("{}: {}", e.line.unwrap_or(0), e.message))
            .collect();
        assert_eq!(messages.len(), 4, "{messages:#?}");
        assert!(messages[0].starts_with("4: MCP server `both` has both"));
        assert!(messages[1].starts_with("7: MCP server name `bad__name`"));
        assert!(messages[2].starts_with("9: MCP server `missing` has no `command` or `url`"));
        assert!(messages[3].starts_with("10: MCP server `ftp`"));
    }

    #[test]
    fn a_list_names_the_workspaces_servers() {
        let dir = tempfile::tempdir().unwrap();
        write(
            dir.path(),
            MCP_WORKSPACE_FILE,
            "mcp_servers:\n  files:\n    command: node\n    cwd: sub\n",
        );
        let agent = write(
            dir.path(),
            "a.agent",
            "name: a\ninstructions: hi\nmcp_servers: [files]\n",
        );
        let servers = declared_mcp_servers(&agent).unwrap();
        let McpTransport::Stdio { cwd, .. } = &servers[0].transport else {
            panic!("stdio expected")
        };
        assert_eq!(cwd, &dir.path().join("sub"));
        assert_eq!(mcp_skill_name("My_Server"), "mcp-my-server");
    }
}
