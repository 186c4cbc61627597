//! [`open_database`]: the store a `--database` value names.

use crate::{EventStore, MemoryStore, PostgresStore, SqliteStore, StoreError};
use std::path::Path;
use std::sync::Arc;

/// Where a workspace keeps its database when none is named, relative to the workspace.
pub const DEFAULT_DATABASE: &str = ".qilin/qilin.db";

/// Opens the store `database` names, or the workspace's SQLite database when it names none:
///
/// - `postgres://…` or `postgresql://…`: a [`PostgresStore`] (the URL's user, password, host,
///   port and database; its tables in the schema `qilin`);
/// - `sqlite:PATH`, or a plain path: a [`SqliteStore`] on that file;
/// - `memory:`: a [`MemoryStore`], which keeps nothing after the process ends.
pub async fn open_database(
    database: Option<&str>,
    workspace: &Path,
) -> Result<Arc<dyn EventStore>, StoreError> {
    let path = match database {
        Some(url) if url.starts_with("postgres://") || url.starts_with("postgresql://") => {
            return Ok(Arc::new(PostgresStore::connect(url).await?));
        }
        Some("memory:") => return Ok(Arc::new(MemoryStore::new())),
        Some(other) if other.contains("://") && !other.starts_with("sqlite:") => {
            return Err(StoreError::Config(format!(
                "unknown database `{other}`: expected postgres://USER:PASSWORD@HOST/DATABASE, \
                 sqlite:PATH, a file path or memory:"
            )));
        }
        Some(other) => {
            let path = other
                .strip_prefix("sqlite://")
                .or_else(|| other.strip_prefix("sqlite:"));
            Path::new(path.unwrap_or(other)).to_path_buf()
        }
        None => workspace.join(DEFAULT_DATABASE),
    };
    let store = tokio::task::spawn_blocking(move || SqliteStore::open(path))
        .await
        .map_err(|err| StoreError::Backend(format!("opening the database failed: {err}")))??;
    Ok(Arc::new(store))
}
