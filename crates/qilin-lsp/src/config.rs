//! Which language server serves which files: the known defaults, and the workspace's
//! `.qilin/lsp.yaml` over them.

use globset::{Glob, GlobSet, GlobSetBuilder};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The workspace file that configures its language servers.
pub const LSP_WORKSPACE_FILE: &str = ".qilin/lsp.yaml";

/// How to run one language's server.
#[derive(Debug, Clone)]
pub struct ServerSpec {
    /// The language it serves (`python`, `typescript`, …).
    pub language: String,
    /// The commands to try, in order: the first found on the search path runs. Each is a
    /// program and its arguments.
    pub candidates: Vec<(String, Vec<String>)>,
    /// The file-name globs it serves (`*.py`); a glob without `/` matches a name at any depth.
    pub patterns: Vec<String>,
    /// Sent as the `initializationOptions` of `initialize`.
    pub initialization_options: Option<serde_json::Value>,
    /// How to install it, told when it is not found.
    pub hint: Option<String>,
    /// Whether it may reach the network from its sandbox (`network: true` in
    /// `.qilin/lsp.yaml`); without it, it has a network namespace of its own with only a
    /// loopback interface.
    pub network: bool,
    matcher: GlobSet,
}

impl ServerSpec {
    fn new(
        language: &str,
        candidates: Vec<(String, Vec<String>)>,
        patterns: Vec<String>,
        initialization_options: Option<serde_json::Value>,
        hint: Option<String>,
    ) -> Result<Self, String> {
        let mut builder = GlobSetBuilder::new();
        for pattern in &patterns {
            let glob = if pattern.contains('/') {
                pattern.clone()
            } else {
                format!("**/{pattern}")
            };
            builder.add(Glob::new(&glob).map_err(|err| {
                format!("`{pattern}` is not a valid file pattern ({err}); expected a glob such as `*.py` or `src/**/*.ts`")
            })?);
        }
        let matcher = builder
            .build()
            .map_err(|err| format!("the file patterns cannot be used: {err}"))?;
        Ok(ServerSpec {
            language: language.to_string(),
            candidates,
            patterns,
            initialization_options,
            hint,
            network: false,
            matcher,
        })
    }

    /// Whether it serves the file at `relative` (a workspace-relative path).
    pub fn serves(&self, relative: &Path) -> bool {
        self.matcher.is_match(relative)
    }

    /// The command name shown for it: the found candidate's, else the first's.
    pub fn display_command(&self, search_path: Option<&OsString>) -> String {
        match self.resolve(search_path) {
            Some((_, name, _)) => name,
            None => self
                .candidates
                .first()
                .map(|(program, _)| command_name(program))
                .unwrap_or_default(),
        }
    }

    /// The first candidate found: its executable, its name and its arguments.
    pub fn resolve(
        &self,
        search_path: Option<&OsString>,
    ) -> Option<(PathBuf, String, Vec<String>)> {
        self.candidates.iter().find_map(|(program, args)| {
            find_program(program, search_path)
                .map(|path| (path, command_name(program), args.clone()))
        })
    }
}

/// The last component of a program name.
fn command_name(program: &str) -> String {
    Path::new(program).file_name().map_or_else(
        || program.to_string(),
        |name| name.to_string_lossy().into_owned(),
    )
}

/// Finds `program` (a path when it holds a `/`, else a name looked up in `search_path`, or the
/// process's `PATH` when `None`).
pub fn find_program(program: &str, search_path: Option<&OsString>) -> Option<PathBuf> {
    if program.contains('/') {
        let path = PathBuf::from(program);
        return is_executable(&path).then_some(path);
    }
    let path = match search_path {
        Some(path) => path.clone(),
        None => std::env::var_os("PATH")?,
    };
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path)
        .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
}

/// The language id a file is opened with (`typescriptreact` for `.tsx`, …).
pub fn language_id(language: &str, path: &Path) -> String {
    let extension = path.extension().and_then(|e| e.to_str()).unwrap_or("");
    match (language, extension) {
        ("typescript", "tsx") => "typescriptreact".into(),
        ("typescript", "js" | "mjs" | "cjs") => "javascript".into(),
        ("typescript", "jsx") => "javascriptreact".into(),
        _ => language.to_string(),
    }
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

/// The servers Qilin knows without configuration.
pub fn known_servers() -> Vec<ServerSpec> {
    let known = [
        (
            "python",
            vec![
                ("pyright-langserver", vec!["--stdio"]),
                ("basedpyright-langserver", vec!["--stdio"]),
            ],
            vec!["*.py", "*.pyi"],
            "install pyright (`npm install -g pyright`) or basedpyright (`pip install basedpyright`)",
        ),
        (
            "typescript",
            vec![("typescript-language-server", vec!["--stdio"])],
            vec![
                "*.ts", "*.tsx", "*.mts", "*.cts", "*.js", "*.jsx", "*.mjs", "*.cjs",
            ],
            "install it with `npm install -g typescript-language-server typescript`",
        ),
        (
            "rust",
            vec![("rust-analyzer", vec![])],
            vec!["*.rs"],
            "install it with `rustup component add rust-analyzer`",
        ),
        (
            "go",
            vec![("gopls", vec![])],
            vec!["*.go"],
            "install it with `go install golang.org/x/tools/gopls@latest`",
        ),
    ];
    known
        .into_iter()
        .filter_map(|(language, candidates, patterns, hint)| {
            ServerSpec::new(
                language,
                candidates
                    .into_iter()
                    .map(|(program, args)| (program.to_string(), strings(&args)))
                    .collect(),
                strings(&patterns),
                None,
                Some(hint.to_string()),
            )
            .ok()
        })
        .collect()
}

/// A problem in `.qilin/lsp.yaml`: the file, the line when known, and what is expected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{}: {message}", path.display(), line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct ConfigError {
    /// The file.
    pub path: PathBuf,
    /// The line, from 1, when known.
    pub line: Option<usize>,
    /// What is wrong and what is expected.
    pub message: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    #[serde(default)]
    servers: BTreeMap<String, RawServer>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawServer {
    command: String,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    patterns: Option<Vec<String>>,
    #[serde(default)]
    initialization_options: Option<serde_json::Value>,
    /// Kept as written, so a value that is not a boolean gets an error naming the key.
    #[serde(default)]
    network: Option<serde_yaml_ng::Value>,
}

/// The servers for `workspace`: the known defaults, each replaced by the workspace's
/// `.qilin/lsp.yaml` entry of the same language, and that file's other languages added.
pub fn workspace_servers(workspace: &Path) -> Result<Vec<ServerSpec>, ConfigError> {
    let path = workspace.join(LSP_WORKSPACE_FILE);
    match std::fs::read_to_string(&path) {
        Ok(text) => servers_from(&path, &text),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(known_servers()),
        Err(err) => Err(ConfigError {
            path,
            line: None,
            message: format!("cannot be read: {err}"),
        }),
    }
}

/// The servers the text of an `lsp.yaml` at `path` configures, over the known defaults.
pub fn servers_from(path: &Path, text: &str) -> Result<Vec<ServerSpec>, ConfigError> {
    let problem = |line: Option<usize>, message: String| ConfigError {
        path: path.to_path_buf(),
        line,
        message,
    };
    let raw: RawConfig = if text.trim().is_empty() {
        RawConfig {
            servers: BTreeMap::new(),
        }
    } else {
        serde_yaml_ng::from_str(text).map_err(|err| {
            problem(
                err.location().map(|l| l.line()),
                format!(
                    "{err}; expected `servers:` mapping a language to `command` (required), \
                     `args`, `patterns` (file globs), `initialization_options` and `network` \
                     (true or false)"
                ),
            )
        })?
    };
    let mut servers = known_servers();
    for (language, server) in raw.servers {
        let line = line_of(text, &language);
        if server.command.trim().is_empty() {
            return Err(problem(
                line,
                format!(
                    "`servers.{language}.command` is empty; expected the server's program, e.g. `pyright-langserver`"
                ),
            ));
        }
        let network = match &server.network {
            None => false,
            Some(serde_yaml_ng::Value::Bool(network)) => *network,
            Some(other) => {
                let written = serde_yaml_ng::to_string(other)
                    .map(|text| text.trim().to_string())
                    .unwrap_or_default();
                return Err(problem(
                    line_after(text, "network", line.unwrap_or(0)).or(line),
                    format!(
                        "`servers.{language}.network` is `{written}`; expected `true` (the \
                         server may reach the network) or `false` (the default: no network)"
                    ),
                ));
            }
        };
        let known = servers.iter().position(|s| s.language == language);
        let patterns = match (server.patterns, known) {
            (Some(patterns), _) => patterns,
            (None, Some(index)) => servers[index].patterns.clone(),
            (None, None) => {
                return Err(problem(
                    line,
                    format!(
                        "`servers.{language}` needs `patterns` (file globs such as `*.lua`): \
                         `{language}` is not a language Qilin knows"
                    ),
                ));
            }
        };
        if patterns.is_empty() {
            return Err(problem(
                line,
                format!(
                    "`servers.{language}.patterns` is empty; expected file globs such as `*.py`"
                ),
            ));
        }
        let mut spec = ServerSpec::new(
            &language,
            vec![(server.command.clone(), server.args)],
            patterns,
            server.initialization_options,
            Some(format!(
                "install `{}` or change `servers.{language}.command` in {LSP_WORKSPACE_FILE}",
                server.command
            )),
        )
        .map_err(|message| problem(line, format!("`servers.{language}.patterns`: {message}")))?;
        spec.network = network;
        match known {
            Some(index) => servers[index] = spec,
            None => servers.push(spec),
        }
    }
    Ok(servers)
}

/// The line (from 1) of the first `key:` in `text`.
fn line_of(text: &str, key: &str) -> Option<usize> {
    line_after(text, key, 0)
}

/// The line (from 1) of the first `key:` in `text` after line `after`.
fn line_after(text: &str, key: &str, after: usize) -> Option<usize> {
    text.lines()
        .skip(after)
        .position(|line| {
            let trimmed = line.trim_start();
            trimmed
                .strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with(':'))
        })
        .map(|index| after + index + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_configured_server_replaces_the_known_one() {
        let text = "servers:\n  python:\n    command: my-pyls\n    args: [--stdio]\n  lua:\n    command: lua-ls\n    patterns: ['*.lua']\n";
        let servers = servers_from(Path::new(".qilin/lsp.yaml"), text).unwrap();
        let python = servers.iter().find(|s| s.language == "python").unwrap();
        assert_eq!(
            python.candidates,
            vec![("my-pyls".to_string(), vec!["--stdio".to_string()])]
        );
        assert!(python.serves(Path::new("src/a.py")));
        let lua = servers.iter().find(|s| s.language == "lua").unwrap();
        assert!(lua.serves(Path::new("x/y.lua")));
    }

    #[test]
    fn errors_name_the_file_the_line_and_what_is_expected() {
        let text = "servers:\n  lua:\n    command: lua-ls\n";
        let err = servers_from(Path::new(".qilin/lsp.yaml"), text).unwrap_err();
        assert_eq!(err.line, Some(2));
        assert!(err.to_string().starts_with(".qilin/lsp.yaml:2: "), "{err}");
        assert!(err.message.contains("needs `patterns`"), "{err}");

        let text = "servers:\n  python:\n    comand: x\n";
        let err = servers_from(Path::new(".qilin/lsp.yaml"), text).unwrap_err();
        assert_eq!(err.line, Some(3), "{err}");
        assert!(err.message.contains("comand"), "{err}");
        assert!(err.message.contains("expected `servers:`"), "{err}");
    }

    #[test]
    fn network_is_off_unless_a_server_turns_it_on_and_a_wrong_value_is_named() {
        let text = "servers:\n  python:\n    command: my-pyls\n    network: true\n";
        let servers = servers_from(Path::new(".qilin/lsp.yaml"), text).unwrap();
        let python = servers.iter().find(|s| s.language == "python").unwrap();
        assert!(python.network);
        assert!(
            servers
                .iter()
                .filter(|s| s.language != "python")
                .all(|s| !s.network)
        );

        let text = "servers:\n  python:\n    command: my-pyls\n    network: yes please\n";
        let err = servers_from(Path::new(".qilin/lsp.yaml"), text).unwrap_err();
        assert_eq!(err.line, Some(4), "{err}");
        assert!(
            err.message
                .contains("`servers.python.network` is `yes please`"),
            "{err}"
        );
        assert!(err.message.contains("expected `true`"), "{err}");
    }
}
