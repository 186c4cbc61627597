//! [`Relay`]: commands for a session that another server process runs, carried to that
//! process through PostgreSQL.
//!
//! With several server processes on one database, a client may reach any of them, but a
//! session's turns run in the one process holding its lease. Every process can show every
//! session live (the store announces new events with `NOTIFY`); a command — start a turn,
//! interrupt, answer a request — must reach the owner. The relay writes it to the table
//! `server_commands` (beside the store's tables, in its schema) and wakes the owner with
//! `NOTIFY` on the owner's own channel; the owner runs it on the session exactly as a request
//! made to it would run, writes the outcome to the row and wakes the sender, which answers its
//! client with that outcome. The client never needs to know which process runs the session.
//! A command the owner does not take within [`Relay::WAIT`] is withdrawn and answered 504; an
//! owner that died stops renewing its lease, and the next command takes the session over.

use crate::commands::{Command, Outcome, Relayed};
use crate::error::ApiError;
use axum::http::StatusCode;
use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use futures_util::stream;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio_postgres::{AsyncMessage, Client, Config, NoTls};

/// Why the relay could not start.
#[derive(Debug, thiserror::Error)]
pub enum RelayError {
    /// The URL or schema is unusable.
    #[error("the command relay's configuration is unusable: {0}")]
    Config(String),
    /// The database refused or failed.
    #[error("the command relay failed: {0}")]
    Database(String),
}

/// Runs a relayed command on a session this process runs: `(session, command) → outcome`.
pub type Handler = Arc<dyn Fn(String, Command) -> BoxFuture<'static, Outcome> + Send + Sync>;

/// The relay of one server process; see the [module](self) notes.
pub struct Relay {
    pool: deadpool_postgres::Pool,
    owner: String,
    waiting: Arc<Mutex<HashMap<i64, oneshot::Sender<()>>>>,
    listener: JoinHandle<()>,
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.listener.abort();
    }
}

/// The channel on which process `owner` hears of commands and outcomes meant for it.
fn channel(owner: &str) -> String {
    let digest = Sha256::digest(owner.as_bytes());
    let hex: String = digest[..12].iter().map(|b| format!("{b:02x}")).collect();
    format!("qilin_relay_{hex}")
}

fn db_error(context: &str) -> impl Fn(tokio_postgres::Error) -> RelayError + '_ {
    move |err| RelayError::Database(format!("{context}: {err}"))
}

impl Relay {
    /// How long a sender waits for the owner to run a command.
    pub const WAIT: Duration = Duration::from_secs(20);

    /// Connects to the database at `url` (the store's), with the relay's table in `schema`
    /// (the store's), for the process named `owner` (its lease owner name); `handler` runs the
    /// commands other processes send it.
    pub async fn connect(
        url: &str,
        schema: &str,
        owner: &str,
        handler: Handler,
    ) -> Result<Self, RelayError> {
        let valid_schema = !schema.is_empty()
            && schema.len() <= 48
            && schema
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        if !valid_schema {
            return Err(RelayError::Config(format!("schema `{schema}`")));
        }
        let mut config: Config = url
            .parse()
            .map_err(|err| RelayError::Config(format!("invalid PostgreSQL URL: {err}")))?;
        let options = match config.get_options() {
            Some(existing) => format!("{existing} -c search_path={schema}"),
            None => format!("-c search_path={schema}"),
        };
        config.options(options);
        config.application_name("qilin-relay");
        config.connect_timeout(Duration::from_secs(10));
        let manager = deadpool_postgres::Manager::new(config.clone(), NoTls);
        let pool = deadpool_postgres::Pool::builder(manager)
            .max_size(4)
            .runtime(deadpool_postgres::Runtime::Tokio1)
            .create_timeout(Some(Duration::from_secs(10)))
            .wait_timeout(Some(Duration::from_secs(30)))
            .build()
            .map_err(|err| RelayError::Config(format!("pool: {err}")))?;
        create_table(&pool, schema).await?;
        let waiting: Arc<Mutex<HashMap<i64, oneshot::Sender<()>>>> = Arc::default();
        let listening = Listening {
            config,
            pool: pool.clone(),
            owner: owner.to_string(),
            channel: channel(owner),
            handler,
            waiting: Arc::clone(&waiting),
        };
        let (client, driver) = listening.listen().await?;
        let listener = tokio::spawn(listening.keep(client, driver));
        Ok(Relay {
            pool,
            owner: owner.to_string(),
            waiting,
            listener,
        })
    }

    /// Runs `command` on session `session` in the process `target`, and gives its outcome.
    pub async fn forward(&self, target: &str, session: &str, command: &Command) -> Outcome {
        let failed = |err: String| {
            ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "relay_failed",
                format!(
                    "the command could not be passed to the process running the session: {err}"
                ),
            )
        };
        let client = self
            .pool
            .get()
            .await
            .map_err(|err| failed(err.to_string()))?;
        let body = serde_json::to_string(command).map_err(|err| failed(err.to_string()))?;
        let row = client
            .query_one(
                "INSERT INTO server_commands (target, sender, session_id, command)
                 VALUES ($1, $2, $3, $4) RETURNING id",
                &[&target, &self.owner, &session, &body],
            )
            .await
            .map_err(|err| failed(err.to_string()))?;
        let id: i64 = row.get(0);
        let (done, finished) = oneshot::channel();
        self.waiting
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id, done);
        let notified = client
            .execute(
                "SELECT pg_notify($1, $2)",
                &[&channel(target), &format!("run {id}")],
            )
            .await;
        if let Err(err) = notified {
            self.forget(id);
            return Err(failed(err.to_string()));
        }
        let _ = tokio::time::timeout(Self::WAIT, finished).await;
        self.forget(id);
        // Take the outcome, or withdraw the command so a late owner does not run it.
        let outcome = client
            .query_opt(
                "DELETE FROM server_commands WHERE id = $1 RETURNING outcome",
                &[&id],
            )
            .await
            .map_err(|err| failed(err.to_string()))?;
        let _ = client
            .execute(
                "DELETE FROM server_commands WHERE created_at < clock_timestamp() - interval '10 minutes'",
                &[],
            )
            .await;
        match outcome.and_then(|row| row.get::<_, Option<String>>(0)) {
            Some(text) if text.is_empty() => Err(ApiError::new(
                StatusCode::GATEWAY_TIMEOUT,
                "owner_unresponsive",
                format!(
                    "the process running session `{session}` (`{target}`) took the command but \
                     did not finish it within {} s; it may still take effect",
                    Self::WAIT.as_secs()
                ),
            )),
            Some(text) => serde_json::from_str::<Relayed>(&text)
                .map_err(|err| failed(format!("an unreadable outcome: {err}")))?
                .outcome(),
            None => Err(ApiError::new(
                StatusCode::GATEWAY_TIMEOUT,
                "owner_unresponsive",
                format!(
                    "the process running session `{session}` (`{target}`) did not take the \
                     command within {} s; if it died, its lease runs out shortly and the next \
                     command takes the session over",
                    Self::WAIT.as_secs()
                ),
            )),
        }
    }

    fn forget(&self, id: i64) {
        self.waiting
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(&id);
    }
}

/// Creates the relay's table, one process at a time.
async fn create_table(pool: &deadpool_postgres::Pool, schema: &str) -> Result<(), RelayError> {
    let context = "creating the table server_commands";
    let mut client = pool
        .get()
        .await
        .map_err(|err| RelayError::Database(format!("{context}: {err}")))?;
    let tx = client.transaction().await.map_err(db_error(context))?;
    tx.execute(
        "SELECT pg_advisory_xact_lock(hashtext($1))",
        &[&format!("qilin relay {schema}")],
    )
    .await
    .map_err(db_error(context))?;
    tx.batch_execute(&format!(
        "CREATE SCHEMA IF NOT EXISTS {schema};
         CREATE TABLE IF NOT EXISTS {schema}.server_commands (
             id BIGSERIAL PRIMARY KEY,
             target TEXT NOT NULL,
             sender TEXT NOT NULL,
             session_id TEXT NOT NULL,
             command TEXT NOT NULL,
             outcome TEXT,
             created_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp()
         );"
    ))
    .await
    .map_err(db_error(context))?;
    tx.commit().await.map_err(db_error(context))
}

/// The listening side: hears of commands for this process and runs them, and of outcomes of
/// the commands it sent.
#[derive(Clone)]
struct Listening {
    config: Config,
    pool: deadpool_postgres::Pool,
    owner: String,
    channel: String,
    handler: Handler,
    waiting: Arc<Mutex<HashMap<i64, oneshot::Sender<()>>>>,
}

impl Listening {
    async fn listen(&self) -> Result<(Client, JoinHandle<()>), RelayError> {
        let context = "listening for relayed commands";
        let (client, mut connection) = self
            .config
            .connect(NoTls)
            .await
            .map_err(db_error(context))?;
        let this = self.clone();
        let driver = tokio::spawn(async move {
            let mut messages = stream::poll_fn(move |cx| connection.poll_message(cx));
            while let Some(Ok(message)) = messages.next().await {
                if let AsyncMessage::Notification(note) = message {
                    this.heard(note.payload());
                }
            }
        });
        client
            .batch_execute(&format!("LISTEN \"{}\"", self.channel))
            .await
            .map_err(db_error(context))?;
        // Commands sent while this process was not listening.
        self.run_pending();
        Ok((client, driver))
    }

    /// Keeps listening, reconnecting when the connection drops.
    async fn keep(self, mut client: Client, mut driver: JoinHandle<()>) {
        loop {
            let _ = (&mut driver).await;
            drop(client);
            let mut wait = Duration::from_millis(100);
            loop {
                tokio::time::sleep(wait).await;
                match self.listen().await {
                    Ok((new_client, new_driver)) => {
                        (client, driver) = (new_client, new_driver);
                        break;
                    }
                    Err(err) => {
                        tracing::warn!(error = %err, "the command relay cannot listen; retrying");
                        wait = (wait * 2).min(Duration::from_secs(5));
                    }
                }
            }
            // Outcomes may have been announced meanwhile: senders look at their rows.
            for (_, done) in self
                .waiting
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .drain()
            {
                let _ = done.send(());
            }
        }
    }

    fn heard(&self, payload: &str) {
        match payload.split_once(' ') {
            Some(("run", id)) => {
                if let Ok(id) = id.parse::<i64>() {
                    let this = self.clone();
                    tokio::spawn(async move { this.run(id).await });
                }
            }
            Some(("done", id)) => {
                if let Ok(id) = id.parse::<i64>()
                    && let Some(done) = self
                        .waiting
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .remove(&id)
                {
                    let _ = done.send(());
                }
            }
            _ => {}
        }
    }

    fn run_pending(&self) {
        let this = self.clone();
        tokio::spawn(async move {
            let Ok(client) = this.pool.get().await else {
                return;
            };
            let Ok(rows) = client
                .query(
                    "SELECT id FROM server_commands WHERE target = $1 AND outcome IS NULL",
                    &[&this.owner],
                )
                .await
            else {
                return;
            };
            for row in rows {
                let id: i64 = row.get(0);
                let next = this.clone();
                tokio::spawn(async move { next.run(id).await });
            }
        });
    }

    /// Runs the command of row `id`, once, and hands its outcome back.
    async fn run(&self, id: i64) {
        let Ok(mut client) = self.pool.get().await else {
            return;
        };
        // Claim the row so a second notification of it runs nothing.
        let claimed = client
            .query_opt(
                "UPDATE server_commands SET outcome = '' WHERE id = $1 AND target = $2 AND outcome IS NULL
                 RETURNING sender, session_id, command",
                &[&id, &self.owner],
            )
            .await;
        let Ok(Some(row)) = claimed else { return };
        let (sender, session, body): (String, String, String) =
            (row.get(0), row.get(1), row.get(2));
        let outcome = match serde_json::from_str::<Command>(&body) {
            Ok(command) => (self.handler)(session, command).await,
            Err(err) => Err(ApiError::bad_request(
                "unreadable_command",
                format!("the relayed command is unreadable: {err}"),
            )),
        };
        let text = serde_json::to_string(&Relayed::of(outcome)).unwrap_or_default();
        let Ok(tx) = client.transaction().await else {
            return;
        };
        let stored = tx
            .execute(
                "UPDATE server_commands SET outcome = $2 WHERE id = $1",
                &[&id, &text],
            )
            .await;
        if stored.is_ok() {
            let _ = tx
                .execute(
                    "SELECT pg_notify($1, $2)",
                    &[&channel(&sender), &format!("done {id}")],
                )
                .await;
            let _ = tx.commit().await;
        }
    }
}
