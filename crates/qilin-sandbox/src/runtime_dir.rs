//! Qilin's private runtime folder: where `qilin serve` writes the token file that lets a
//! client in. One definition, shared by the server that writes it and the sandbox that hides
//! it: every sandboxed command sees the folder empty, and cannot connect to the port of a
//! server whose token file is there.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The folder for files only Qilin's own processes may read: `$XDG_RUNTIME_DIR/qilin`, else
/// `~/.qilin/run`; `None` when neither variable is set.
pub fn private_runtime_dir() -> Option<PathBuf> {
    runtime_dir_from(
        std::env::var_os("XDG_RUNTIME_DIR"),
        std::env::var_os("HOME"),
    )
}

/// [`private_runtime_dir`] for the given `XDG_RUNTIME_DIR` and `HOME` (an empty one is unset).
fn runtime_dir_from(runtime: Option<OsString>, home: Option<OsString>) -> Option<PathBuf> {
    let set = |value: Option<OsString>| value.filter(|value| !value.is_empty());
    if let Some(runtime) = set(runtime) {
        return Some(PathBuf::from(runtime).join("qilin"));
    }
    set(home).map(|home| fallback_runtime_dir(Path::new(&home)))
}

/// The folder used when `XDG_RUNTIME_DIR` is not set: `HOME/.qilin/run`.
fn fallback_runtime_dir(home: &Path) -> PathBuf {
    home.join(".qilin").join("run")
}

/// Every folder a `qilin serve` of this user may have written its token file to, whichever
/// environment it was started from: [`private_runtime_dir`] for this environment and the
/// `~/.qilin/run` fallback.
pub(crate) fn runtime_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = private_runtime_dir().into_iter().collect();
    if let Some(home) = std::env::var_os("HOME").filter(|home| !home.is_empty()) {
        dirs.push(fallback_runtime_dir(Path::new(&home)));
    }
    dirs.dedup();
    dirs
}

/// The name of the token file of a server listening on `port`.
pub fn token_file_name(port: u16) -> String {
    format!("serve-{port}.json")
}

/// The ports of the servers whose token files are in `dirs`.
pub(crate) fn server_ports(dirs: &[PathBuf]) -> Vec<u16> {
    let mut ports: Vec<u16> = dirs
        .iter()
        .filter_map(|dir| std::fs::read_dir(dir).ok())
        .flatten()
        .filter_map(|entry| {
            let name = entry.ok()?.file_name();
            let port = name
                .to_str()?
                .strip_prefix("serve-")?
                .strip_suffix(".json")?;
            port.parse().ok()
        })
        .collect();
    ports.sort_unstable();
    ports.dedup();
    ports
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_runtime_folder_is_under_xdg_runtime_dir_else_home() {
        let some = |text: &str| Some(OsString::from(text));
        assert_eq!(
            runtime_dir_from(some("/run/user/1000"), some("/home/me")),
            Some(PathBuf::from("/run/user/1000/qilin"))
        );
        assert_eq!(
            runtime_dir_from(some(""), some("/home/me")),
            Some(PathBuf::from("/home/me/.qilin/run"))
        );
        assert_eq!(runtime_dir_from(None, None), None);
    }

    #[test]
    fn server_ports_are_read_from_token_file_names() {
        let dir = tempfile::tempdir().unwrap();
        for name in [
            token_file_name(8080),
            token_file_name(41234),
            "serve-x.json".into(),
            "notes.txt".into(),
        ] {
            std::fs::write(dir.path().join(name), "{}").unwrap();
        }
        let missing = dir.path().join("missing");
        assert_eq!(
            server_ports(&[dir.path().to_path_buf(), missing]),
            [8080, 41234]
        );
    }
}
