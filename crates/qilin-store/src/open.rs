//! [`open_database`]: the store a `--database` value names.

use crate::{EventStore, MemoryStore, SqliteStore, StoreError};
#[cfg(feature = "postgres")]
use crate::{PostgresOptions, PostgresStore};
use std::path::Path;
use std::sync::Arc;

/// Where a workspace keeps its database when none is named, relative to the workspace.
pub const DEFAULT_DATABASE: &str = ".qilin/qilin.db";

/// The PostgreSQL schema the tables live in when the URL names none.
pub const DEFAULT_POSTGRES_SCHEMA: &str = "qilin";

/// Opens the store `database` names, or the workspace's SQLite database when it names none:
///
/// - `postgres://…` or `postgresql://…`: a [`PostgresStore`] (the URL's user, password, host,
///   port and database; its tables in the schema `qilin`, or the one a `schema=NAME` parameter
///   names, see [`postgres_schema`]); refused with a clear error by a build without the cargo
///   feature `postgres`;
/// - `sqlite:PATH`, or a plain path: a [`SqliteStore`] on that file;
/// - `memory:`: a [`MemoryStore`], which keeps nothing after the process ends.
pub async fn open_database(
    database: Option<&str>,
    workspace: &Path,
) -> Result<Arc<dyn EventStore>, StoreError> {
    let path = match database {
        Some(url) if url.starts_with("postgres://") || url.starts_with("postgresql://") => {
            return open_postgres(url).await;
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

/// The PostgreSQL store at `url`.
#[cfg(feature = "postgres")]
async fn open_postgres(url: &str) -> Result<Arc<dyn EventStore>, StoreError> {
    let (url, schema) = postgres_schema(url);
    let options = PostgresOptions {
        schema,
        ..PostgresOptions::default()
    };
    Ok(Arc::new(PostgresStore::connect_with(&url, options).await?))
}

/// A build without PostgreSQL refuses a PostgreSQL URL, saying how to get one that takes it.
#[cfg(not(feature = "postgres"))]
async fn open_postgres(url: &str) -> Result<Arc<dyn EventStore>, StoreError> {
    let (url, _) = postgres_schema(url);
    let host = url
        .rsplit_once('@')
        .map_or("the database", |(_, host)| host);
    Err(StoreError::Config(format!(
        "this Qilin was built without PostgreSQL support, so it cannot open {host}: build it \
         with the cargo feature `postgres` (on by default: `cargo build -p qilin-cli`), or use \
         a SQLite database (sqlite:PATH, a file path) or memory:"
    )))
}

/// Splits the `schema=NAME` parameter, Qilin's own, off a PostgreSQL URL: the URL without it,
/// and the schema the tables live in (`qilin` when the URL names none). Several Qilin
/// installations can share one database, each in a schema of its own.
pub fn postgres_schema(url: &str) -> (String, String) {
    let mut schema = DEFAULT_POSTGRES_SCHEMA.to_string();
    let Some((base, query)) = url.split_once('?') else {
        return (url.to_string(), schema);
    };
    let mut kept = Vec::new();
    for parameter in query.split('&') {
        match parameter.strip_prefix("schema=") {
            Some(name) => schema = name.to_string(),
            None => kept.push(parameter),
        }
    }
    let url = match kept.is_empty() {
        true => base.to_string(),
        false => format!("{base}?{}", kept.join("&")),
    };
    (url, schema)
}

#[cfg(test)]
mod tests {
    use super::postgres_schema;

    #[test]
    fn a_schema_parameter_is_split_off_the_url() {
        let plain = "postgres://u:p@h:5432/db";
        assert_eq!(
            postgres_schema(plain),
            (plain.to_string(), "qilin".to_string())
        );
        assert_eq!(
            postgres_schema("postgres://u:p@h/db?schema=team_a&sslmode=disable"),
            (
                "postgres://u:p@h/db?sslmode=disable".to_string(),
                "team_a".to_string()
            )
        );
        assert_eq!(
            postgres_schema("postgres://u:p@h/db?schema=team_b"),
            ("postgres://u:p@h/db".to_string(), "team_b".to_string())
        );
    }

    /// A build without the `postgres` feature refuses a PostgreSQL URL with a message saying
    /// how to get one that takes it, and never repeats the URL's password.
    #[cfg(not(feature = "postgres"))]
    #[tokio::test]
    async fn a_build_without_postgres_says_how_to_get_it() {
        let dir = tempfile::tempdir().unwrap();
        let refused =
            super::open_database(Some("postgres://me:secret@db.example:5432/q"), dir.path())
                .await
                .err()
                .expect("refused");
        let message = refused.to_string();
        assert!(message.contains("without PostgreSQL support"), "{message}");
        assert!(message.contains("feature `postgres`"), "{message}");
        assert!(message.contains("db.example:5432/q"), "{message}");
        assert!(!message.contains("secret"), "{message}");
    }
}
