//! Reading a small file Qilin uses for its own purposes (an agent file, a skill, `.git/HEAD`,
//! `.qilin/mcp.yaml`, a project memory file) from a folder a repository or a command may have
//! shaped: the open never follows a link in the last component and never waits (a FIFO is
//! refused, not read), only a regular file is read, and never more than a stated number of
//! bytes (a sparse 8 GB file or a link to `/dev/zero` costs nothing).

use std::io::{self, Read};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// The cap for small metadata files: `.git/HEAD`, a `.git` file naming its git folder.
pub const SMALL_FILE_LIMIT: u64 = 4 * 1024;

/// The cap for files Qilin reads as configuration or prompt text: agent files, instructions
/// files, `SKILL.md`, `.qilin/mcp.yaml`.
pub const CONFIG_FILE_LIMIT: u64 = 1024 * 1024;

/// Why a file Qilin reads for itself was not read.
#[derive(Debug, thiserror::Error)]
pub enum OwnFileError {
    /// The file could not be opened or read.
    #[error("`{}` could not be read: {source}", .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The path names a symbolic link.
    #[error(
        "`{}` is a symbolic link; Qilin reads its own files only as regular files, never \
         through a link (replace the link with the file itself)",
        .path.display()
    )]
    Link {
        /// The file.
        path: PathBuf,
    },
    /// The path names a folder, a FIFO, a socket or a device.
    #[error(
        "`{}` is not a regular file (a folder, FIFO, socket or device); Qilin reads its own \
         files only as regular files",
        .path.display()
    )]
    NotRegular {
        /// The file.
        path: PathBuf,
    },
    /// The file is larger than the cap.
    #[error("`{}` is larger than {limit} bytes, more than Qilin reads of such a file", .path.display())]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// The cap, in bytes.
        limit: u64,
    },
    /// The file is not UTF-8 text.
    #[error("`{}` is not UTF-8 text", .path.display())]
    NotText {
        /// The file.
        path: PathBuf,
    },
}

impl OwnFileError {
    /// True when nothing is at the path (the file, or a folder above it, does not exist).
    pub fn is_not_found(&self) -> bool {
        matches!(self, OwnFileError::Io { source, .. } if source.kind() == io::ErrorKind::NotFound)
    }
}

/// The bytes of the regular file at `path`, at most `limit` of them: the last component is
/// never followed if it is a link, the open never blocks, and anything but a regular file
/// (or a file over `limit` bytes) is refused, naming the path.
pub fn read_own_file(path: &Path, limit: u64) -> Result<Vec<u8>, OwnFileError> {
    let io = |source: io::Error| OwnFileError::Io {
        path: path.to_path_buf(),
        source,
    };
    let flags = nix::fcntl::OFlag::O_NOFOLLOW | nix::fcntl::OFlag::O_NONBLOCK;
    let file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags.bits())
        .open(path)
    {
        Ok(file) => file,
        // `O_NOFOLLOW` on a link fails with `ELOOP`.
        Err(err) if err.raw_os_error() == Some(nix::errno::Errno::ELOOP as i32) => {
            return Err(OwnFileError::Link {
                path: path.to_path_buf(),
            });
        }
        Err(err) => return Err(io(err)),
    };
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(OwnFileError::NotRegular {
            path: path.to_path_buf(),
        });
    }
    let too_large = || OwnFileError::TooLarge {
        path: path.to_path_buf(),
        limit,
    };
    if meta.len() > limit {
        return Err(too_large());
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    // The file may grow after the size was read: one byte more than the cap shows it.
    file.take(limit + 1).read_to_end(&mut bytes).map_err(io)?;
    if bytes.len() as u64 > limit {
        return Err(too_large());
    }
    Ok(bytes)
}

/// The text of the regular file at `path`, read as [`read_own_file`] reads it.
pub fn read_own_text(path: &Path, limit: u64) -> Result<String, OwnFileError> {
    String::from_utf8(read_own_file(path, limit)?).map_err(|_| OwnFileError::NotText {
        path: path.to_path_buf(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn a_regular_file_within_the_cap_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("HEAD");
        std::fs::write(&path, "ref: refs/heads/main\n").unwrap();
        assert_eq!(
            read_own_text(&path, SMALL_FILE_LIMIT).unwrap(),
            "ref: refs/heads/main\n"
        );
        let missing = read_own_file(&dir.path().join("gone"), 10).unwrap_err();
        assert!(missing.is_not_found(), "{missing}");
    }

    #[test]
    fn links_fifos_devices_folders_and_large_files_are_refused_without_reading() {
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("zero");
        symlink("/dev/zero", &link).unwrap();
        let err = read_own_file(&link, SMALL_FILE_LIMIT).unwrap_err();
        assert!(matches!(err, OwnFileError::Link { .. }), "{err}");
        assert!(err.to_string().contains("symbolic link"), "{err}");

        let fifo = dir.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        // Never waits for a writer.
        let err = read_own_file(&fifo, SMALL_FILE_LIMIT).unwrap_err();
        assert!(matches!(err, OwnFileError::NotRegular { .. }), "{err}");
        assert!(matches!(
            read_own_file(Path::new("/dev/zero"), SMALL_FILE_LIMIT),
            Err(OwnFileError::NotRegular { .. })
        ));
        assert!(matches!(
            read_own_file(dir.path(), SMALL_FILE_LIMIT),
            Err(OwnFileError::NotRegular { .. })
        ));

        // A sparse 8 GB file: refused from its size, nothing allocated.
        let sparse = dir.path().join("sparse");
        std::fs::File::create(&sparse)
            .unwrap()
            .set_len(8 << 30)
            .unwrap();
        let err = read_own_file(&sparse, SMALL_FILE_LIMIT).unwrap_err();
        assert!(
            matches!(err, OwnFileError::TooLarge { limit: 4096, .. }),
            "{err}"
        );
        assert!(err.to_string().contains("larger than 4096 bytes"), "{err}");
        std::fs::write(dir.path().join("bin"), [0xff, 0xfe]).unwrap();
        assert!(matches!(
            read_own_text(&dir.path().join("bin"), 10),
            Err(OwnFileError::NotText { .. })
        ));
    }
}
