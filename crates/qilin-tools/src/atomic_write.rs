//! Atomic file writes: a temporary file in the same folder, then a rename over the target,
//! so a crash never leaves half a file.

use std::io::{self, Write};
use std::path::Path;

/// Writes `bytes` to `path` atomically, creating missing parent folders. An existing file
/// keeps its permissions. Returns `true` when the file was created, `false` when replaced.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<bool> {
    let parent = path.parent().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("`{}` has no parent folder", path.display()),
        )
    })?;
    std::fs::create_dir_all(parent)?;
    let existing = match std::fs::metadata(path) {
        Ok(meta) if meta.is_dir() => {
            return Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                format!("`{}` is a folder, not a file", path.display()),
            ));
        }
        Ok(meta) => Some(meta.permissions()),
        Err(err) if err.kind() == io::ErrorKind::NotFound => None,
        Err(err) => return Err(err),
    };
    let mut temp = tempfile::Builder::new()
        .prefix(".qilin-write-")
        .tempfile_in(parent)?;
    temp.write_all(bytes)?;
    temp.as_file().sync_all()?;
    if let Some(permissions) = &existing {
        temp.as_file().set_permissions(permissions.clone())?;
    }
    temp.persist(path).map_err(|err| err.error)?;
    Ok(existing.is_none())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creates_then_replaces_leaving_no_temporary_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a/b/c.txt");
        assert!(write_atomically(&path, b"one").unwrap());
        assert!(!write_atomically(&path, b"two").unwrap());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "two");
        let names: Vec<_> = std::fs::read_dir(dir.path().join("a/b"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec!["c.txt"]);
    }

    #[test]
    fn a_folder_is_not_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        let err = write_atomically(dir.path(), b"x").unwrap_err();
        assert!(
            err.to_string().contains("is a folder") || err.kind() == io::ErrorKind::InvalidInput
        );
    }
}
