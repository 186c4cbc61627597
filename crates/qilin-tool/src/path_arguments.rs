//! The path arguments of a call in their canonical form, so that review rules (and the tool)
//! see what a path is, not how it was spelled.
//!
//! Each argument a tool declares in `#[tool(paths = [...])]` that resolves beneath the
//! workspace is replaced by its canonical workspace-relative path: `./secrets/key`,
//! `src/../secrets/key` and the absolute path all become `secrets/key`, and a path through a
//! symlink becomes the path of what the link leads to. A path that does not resolve (outside
//! the workspace, through a dangling link) is left as given: the tool refuses it with its own
//! message.

use crate::Workspace;
use serde_json::Value;
use std::path::Path;

/// `arguments` with every declared path argument that resolves inside `workspace` replaced by
/// its canonical workspace-relative form.
pub(crate) fn canonical_paths(mut arguments: Value, declared: &[&str], workspace: &Path) -> Value {
    if declared.is_empty() {
        return arguments;
    }
    let mut opened: Option<Option<Workspace>> = None;
    for argument in declared {
        let keys: Vec<&str> = argument.split('.').collect();
        for_each_string(&mut arguments, &keys, &mut |value| {
            let root = opened.get_or_insert_with(|| Workspace::open(workspace).ok());
            if let Some(resolved) = root.as_ref().and_then(|ws| ws.resolve(value).ok()) {
                *value = resolved.relative().to_string();
            }
        });
    }
    arguments
}

/// Calls `apply` on every string reached by `keys` from `value`: an object key per step,
/// every element of an array met on the way.
fn for_each_string(value: &mut Value, keys: &[&str], apply: &mut dyn FnMut(&mut String)) {
    match (value, keys.split_first()) {
        (Value::Array(items), _) => {
            for item in items {
                for_each_string(item, keys, apply);
            }
        }
        (Value::Object(map), Some((key, rest))) => {
            if let Some(inner) = map.get_mut(*key) {
                for_each_string(inner, rest, apply);
            }
        }
        (Value::String(text), None) => apply(text),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_spelling_of_a_path_becomes_its_canonical_form() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("secrets")).unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::os::unix::fs::symlink("secrets", dir.path().join("public")).unwrap();
        let absolute = dir.path().join("secrets/key").display().to_string();
        for raw in [
            "./secrets/key",
            "src/../secrets/key",
            absolute.as_str(),
            "public/key",
        ] {
            let arguments = canonical_paths(json!({"path": raw}), &["path"], dir.path());
            assert_eq!(arguments, json!({"path": "secrets/key"}), "{raw}");
        }
        let nested = canonical_paths(
            json!({"edits": [{"path": "./a"}, {"path": "src/../b"}], "path": 3}),
            &["edits.path", "path"],
            dir.path(),
        );
        assert_eq!(
            nested,
            json!({"edits": [{"path": "a"}, {"path": "b"}], "path": 3})
        );
        let outside = canonical_paths(json!({"path": "../x"}), &["path"], dir.path());
        assert_eq!(outside, json!({"path": "../x"}));
    }
}
