//! The cache of check runs: a run is reused while neither its declaration nor a file it reads
//! has changed.
//!
//! The key is a SHA-256 over the declaration (command, parser, report, inputs) and, for every
//! file the check reads, its path and its contents. The files a check reads are those its
//! `inputs` globs match, or, without `inputs`, every file of the workspace that is not ignored:
//! the walk honours `.gitignore` (inside a git repository or not), `.git/info/exclude` and
//! `.ignore`, and leaves out `.git/` and `.qilin/`. Git itself is not run: a repository's
//! configuration could name a program (`core.fsmonitor`) that would run outside the sandbox.
//! The files are listed and read in the host process, off the async threads.
//!
//! The cache lives in memory, in the session's [`crate::CheckService`]: a result is only ever
//! reused in the process that produced it, and a new process (a resumed session) runs each
//! check once again.

use globset::{Glob, GlobSet, GlobSetBuilder};
use parking_lot::Mutex;
use qilin_protocol::checks::CheckRun;
use qilin_skill::CheckDeclaration;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The most bytes read of one file for its hash; a larger file is hashed by its first bytes,
/// its size and its modification time.
const MAX_HASHED_FILE: u64 = 64 * 1024 * 1024;

/// The reusable runs of a session's checks, by id.
#[derive(Debug, Default)]
pub(crate) struct RunCache {
    runs: Mutex<HashMap<String, (String, CheckRun)>>,
}

impl RunCache {
    /// The run of check `id` made when its key was `key`, if it is still the last one.
    pub(crate) fn get(&self, id: &str, key: &str) -> Option<CheckRun> {
        let runs = self.runs.lock();
        runs.get(id)
            .filter(|(stored, _)| stored == key)
            .map(|(_, run)| run.clone())
    }

    /// Keeps `run` of check `id`, made with key `key`, replacing the earlier one.
    pub(crate) fn put(&self, id: &str, key: String, run: CheckRun) {
        let mut runs = self.runs.lock();
        runs.insert(id.to_string(), (key, run));
    }

    /// Forgets the run of check `id` (a run that is not reused: timed out, not started).
    pub(crate) fn forget(&self, id: &str) {
        let mut runs = self.runs.lock();
        runs.remove(id);
    }
}

/// The files of a workspace a check may read, each with the SHA-256 of its contents, sorted
/// by path: listed and read once for every check of a call.
pub(crate) struct TreeDigest {
    files: Vec<(PathBuf, [u8; 32])>,
}

impl TreeDigest {
    /// Lists the files of `workspace` that are not ignored and hashes those one of `checks`
    /// may read (every file, when one of them declares no `inputs`). Files that cannot be read
    /// count by their path and the error, so a change to them still changes a key.
    pub(crate) fn of(workspace: &Path, checks: &[CheckDeclaration]) -> Self {
        let sets: Option<Vec<GlobSet>> = checks
            .iter()
            .map(|check| input_globs(&check.inputs))
            .collect();
        let mut files: Vec<(PathBuf, [u8; 32])> = listed_files(workspace)
            .into_iter()
            .filter(|relative| match &sets {
                None => true,
                Some(sets) => sets.iter().any(|set| set.is_match(relative)),
            })
            .map(|relative| {
                let mut hash = Sha256::new();
                hash_file(&workspace.join(&relative), &mut hash);
                (relative, hash.finalize().into())
            })
            .collect();
        files.sort();
        TreeDigest { files }
    }
}

/// The cache key of `check` over the files of `tree`, as hex: its declaration, then the path
/// and digest of each file it reads (its `inputs`, or every file), its own report left out.
pub(crate) fn cache_key(check: &CheckDeclaration, tree: &TreeDigest) -> String {
    let mut hash = Sha256::new();
    for part in [
        check.command.as_str(),
        check.parser.as_str(),
        check.report.as_deref().unwrap_or(""),
    ] {
        hash.update((part.len() as u64).to_le_bytes());
        hash.update(part.as_bytes());
    }
    for glob in &check.inputs {
        hash.update(b"input\0");
        hash.update(glob.as_bytes());
        hash.update(b"\0");
    }
    let inputs = input_globs(&check.inputs);
    for (relative, digest) in &tree.files {
        if let Some(inputs) = &inputs
            && !inputs.is_match(relative.as_path())
        {
            continue;
        }
        let text = relative.to_string_lossy();
        if check.report.as_deref() == Some(text.as_ref()) {
            // The report the check writes is its output, not its input.
            continue;
        }
        hash.update(b"file\0");
        hash.update(text.as_bytes());
        hash.update(b"\0");
        hash.update(digest);
    }
    hash.finalize()
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

/// The `inputs` globs as one set, or `None` for every file.
fn input_globs(inputs: &[String]) -> Option<GlobSet> {
    if inputs.is_empty() {
        return None;
    }
    let mut set = GlobSetBuilder::new();
    for glob in inputs {
        // The declarations were checked when loaded; a glob that fails here matches nothing.
        if let Ok(glob) = Glob::new(glob.trim_start_matches("./")) {
            set.add(glob);
        }
    }
    set.build().ok()
}

/// Every file under `workspace` that is not ignored, relative to it, without `.git/` and
/// `.qilin/`.
fn listed_files(workspace: &Path) -> Vec<PathBuf> {
    let walk = ignore::WalkBuilder::new(workspace)
        .hidden(false)
        .require_git(false)
        .follow_links(false)
        .filter_entry(|entry| {
            let name = entry.file_name();
            !(entry.depth() == 1 && (name == ".git" || name == ".qilin"))
        })
        .build();
    walk.flatten()
        .filter(|entry| entry.file_type().is_some_and(|kind| kind.is_file()))
        .filter_map(|entry| {
            entry
                .path()
                .strip_prefix(workspace)
                .ok()
                .map(Path::to_path_buf)
        })
        .collect()
}

/// Adds the contents of the file at `path` to `hash` (its first [`MAX_HASHED_FILE`] bytes,
/// then its size and modification time when it is larger).
fn hash_file(path: &Path, hash: &mut Sha256) {
    let file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(err) => {
            hash.update(format!("unreadable: {err}").as_bytes());
            return;
        }
    };
    let meta = file.metadata().ok();
    let mut reader = file.take(MAX_HASHED_FILE);
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => hash.update(&buf[..n]),
            Err(err) => {
                hash.update(format!("unreadable: {err}").as_bytes());
                break;
            }
        }
    }
    if let Some(meta) = meta
        && meta.len() > MAX_HASHED_FILE
    {
        hash.update(meta.len().to_le_bytes());
        if let Ok(modified) = meta.modified() {
            hash.update(format!("{modified:?}").as_bytes());
        }
    }
}
