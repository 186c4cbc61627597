//! Checkpoints off the writer's path. A checkpoint copies the write-ahead log back into the
//! database and syncs both files to disk, which can take a while; SQLite runs it inside the
//! commit that crosses its threshold, stalling every append queued behind that commit. Here the
//! writer's commits only signal a thread of its own, which checkpoints on its own connection
//! while the writer goes on; only a log grown far past the threshold (a checkpointer that cannot
//! keep up) is checkpointed by the writer itself, as SQLite would.

use super::{schema, sqlite_error};
use crate::StoreError;
use rusqlite::Connection;
use rusqlite::hooks::Wal;
use rusqlite::wal::CheckpointMode;
use std::ffi::c_int;
use std::path::Path;
use std::sync::mpsc::{SyncSender, sync_channel};
use std::thread::JoinHandle;
use std::time::Duration;

/// Log pages after which a commit asks the checkpointer to run (SQLite's own default).
const BACKGROUND_PAGES: c_int = 1000;

/// Log pages after which the writer checkpoints itself, so the log stays bounded.
const WRITER_PAGES: c_int = 64_000;

/// The checkpointing thread.
pub(super) struct Checkpointer {
    signal: Option<SyncSender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Checkpointer {
    /// Starts a checkpointer on its own connection to the database at `path`.
    pub(super) fn start(path: &Path, busy_timeout: Duration) -> Result<Self, StoreError> {
        let context = path.display().to_string();
        let conn = Connection::open(path).map_err(|err| sqlite_error(&err, &context))?;
        schema::configure(&conn, busy_timeout).map_err(|err| sqlite_error(&err, &context))?;
        // One pending request is enough: a checkpoint copies whatever the log holds by then.
        let (signal, requests) = sync_channel::<()>(1);
        let thread = std::thread::Builder::new()
            .name("qilin-store-checkpoint".into())
            .spawn(move || {
                while requests.recv().is_ok() {
                    // A checkpoint that fails (the disk, a lock) copies nothing and loses
                    // nothing; the log keeps every commit and the next request tries again.
                    let _ = conn.wal_checkpoint_v2(None::<&str>, CheckpointMode::PASSIVE);
                }
            })
            .map_err(|err| StoreError::Backend(format!("cannot start a thread: {err}")))?;
        Ok(Checkpointer {
            signal: Some(signal),
            thread: Some(thread),
        })
    }

    /// Makes the writer's commits signal this checkpointer instead of checkpointing.
    pub(super) fn watch(&self, writer: &mut Connection) -> rusqlite::Result<()> {
        let Some(signal) = self.signal.clone() else {
            return Ok(());
        };
        writer.wal_hook(Some(move |wal: &mut Wal, pages: c_int| {
            if pages >= WRITER_PAGES {
                // The commit has happened whatever this returns, and an error here would be
                // reported as the commit's; a failed checkpoint is tried again next commit.
                let _ = wal.checkpoint_v2(CheckpointMode::PASSIVE);
            } else if pages >= BACKGROUND_PAGES {
                // Full means a request is pending already, which will see these pages too.
                let _ = signal.try_send(());
            }
            Ok(())
        }))
    }
}

impl Drop for Checkpointer {
    /// Stops the thread once the writer (which holds a signal too) has closed.
    fn drop(&mut self) {
        drop(self.signal.take());
        if let Some(thread) = self.thread.take() {
            // A checkpointer that panicked leaves the log as it was: nothing to do.
            let _ = thread.join();
        }
    }
}
