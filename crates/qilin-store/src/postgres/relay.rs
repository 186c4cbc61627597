//! [`PostgresRelay`]: the [`CommandRelay`] of processes sharing a [`PostgresStore`].
//!
//! The sender writes the command to the table `server_commands` (beside the store's tables, in
//! its schema) and wakes the owner with `NOTIFY` on the owner's own channel; the owner claims the
//! row, runs the command through its [`RelayHandler`], writes the outcome to the row and wakes
//! the sender, which takes the outcome and deletes the row. A command the owner does not take
//! within [`PostgresRelay::WAIT`] is withdrawn; a sender woken when its listening connection
//! came back looks at its row and waits on while the row has no outcome. The listening connection is kept up as the
//! store's is ([`keep_listening`]); commands sent while it was down are run once it is back.
//!
//! [`PostgresStore`]: super::PostgresStore

use super::{Heard, keep_listening, listen, pg_error};
use crate::StoreError;
use crate::relay::{CommandRelay, RelayError, RelayHandler};
use async_trait::async_trait;
use deadpool_postgres::Pool;
use parking_lot::{Mutex, MutexGuard};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio_postgres::Config;

/// Senders waiting for the outcome of a command, by row id.
type Waiting = Arc<Mutex<HashMap<i64, oneshot::Sender<()>>>>;

fn waiting(waiting: &Waiting) -> MutexGuard<'_, HashMap<i64, oneshot::Sender<()>>> {
    waiting.lock()
}

/// The relay of one process: a command is a row of `server_commands` (in the store's schema),
/// announced to its target with `NOTIFY` on the target's own channel; the target claims the row,
/// runs it through its [`RelayHandler`], writes the outcome and wakes the sender. A command the
/// target does not take within [`PostgresRelay::WAIT`] is withdrawn, so it never takes effect.
pub struct PostgresRelay {
    pool: Pool,
    owner: String,
    waiting: Waiting,
    listener: JoinHandle<()>,
}

impl Drop for PostgresRelay {
    /// Stops listening, which closes the listening connection.
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

impl PostgresRelay {
    /// How long a sender waits for the owner to run a command.
    pub const WAIT: Duration = Duration::from_secs(20);

    /// The relay of the process named `owner` (its lease owner name) over the store's `pool`
    /// and connection settings `config`, its table in `schema`; `handler` runs the commands
    /// other processes send it.
    pub(super) async fn connect(
        pool: Pool,
        config: Config,
        schema: &str,
        owner: &str,
        handler: RelayHandler,
    ) -> Result<Self, StoreError> {
        create_table(&pool, schema).await?;
        let waiting_senders: Waiting = Arc::default();
        let runner = Runner {
            pool: pool.clone(),
            owner: owner.to_string(),
            handler,
        };
        let heard: Heard = {
            let runner = runner.clone();
            let waiting_senders = Arc::clone(&waiting_senders);
            Arc::new(move |payload: &str| heard(&runner, &waiting_senders, payload))
        };
        let channel = channel(owner);
        let context = "listening for relayed commands";
        let (client, driver) = listen(&config, &channel, &heard, context).await?;
        // Commands sent while this process was not listening.
        runner.run_pending();
        let reconnected = {
            let waiting_senders = Arc::clone(&waiting_senders);
            Arc::new(move || {
                runner.run_pending();
                // Outcomes may have been announced meanwhile: senders look at their rows.
                for (_, done) in waiting(&waiting_senders).drain() {
                    let _ = done.send(());
                }
            })
        };
        let listener = tokio::spawn(keep_listening(
            config,
            channel,
            heard,
            context,
            client,
            driver,
            reconnected,
        ));
        Ok(PostgresRelay {
            pool,
            owner: owner.to_string(),
            waiting: waiting_senders,
            listener,
        })
    }

    fn forget(&self, id: i64) {
        waiting(&self.waiting).remove(&id);
    }
}

#[async_trait]
impl CommandRelay for PostgresRelay {
    async fn forward(
        &self,
        target: &str,
        session: &str,
        command: &str,
    ) -> Result<String, RelayError> {
        let failed = |err: String| RelayError::Failed(err);
        let client = self
            .pool
            .get()
            .await
            .map_err(|err| failed(err.to_string()))?;
        let row = client
            .query_one(
                "INSERT INTO server_commands (target, sender, session_id, command)
                 VALUES ($1, $2, $3, $4) RETURNING id",
                &[&target, &self.owner, &session, &command],
            )
            .await
            .map_err(|err| failed(err.to_string()))?;
        let id: i64 = row.try_get(0).map_err(|err| failed(err.to_string()))?;
        let deadline = tokio::time::Instant::now() + Self::WAIT;
        let (done, mut finished) = oneshot::channel();
        waiting(&self.waiting).insert(id, done);
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
        // Woken by the outcome's announcement, or by a reconnection of the listening connection
        // (announcements may have been missed): look at the row, and wait on if it has none.
        while tokio::time::timeout_at(deadline, finished).await.is_ok() {
            let (done, next) = oneshot::channel();
            waiting(&self.waiting).insert(id, done);
            finished = next;
            let outcome = client
                .query_opt("SELECT outcome FROM server_commands WHERE id = $1", &[&id])
                .await;
            let has_outcome = match outcome {
                Ok(row) => row
                    .and_then(|row| row.try_get::<_, Option<String>>(0).ok().flatten())
                    .is_some_and(|text| !text.is_empty()),
                Err(err) => {
                    self.forget(id);
                    return Err(failed(err.to_string()));
                }
            };
            if has_outcome {
                break;
            }
        }
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
        match outcome.and_then(|row| row.try_get::<_, Option<String>>(0).ok().flatten()) {
            Some(text) if text.is_empty() => Err(RelayError::Unfinished {
                target: target.to_string(),
                session: session.to_string(),
                waited: Self::WAIT,
            }),
            Some(text) => Ok(text),
            None => Err(RelayError::NotTaken {
                target: target.to_string(),
                session: session.to_string(),
                waited: Self::WAIT,
            }),
        }
    }
}

/// Creates the relay's table, one process at a time.
async fn create_table(pool: &Pool, schema: &str) -> Result<(), StoreError> {
    let context = "creating the table server_commands";
    let error = |err: tokio_postgres::Error| pg_error(&err, context);
    let mut client = pool
        .get()
        .await
        .map_err(|err| StoreError::Backend(format!("{context}: no connection: {err}")))?;
    let tx = client.transaction().await.map_err(error)?;
    tx.execute(
        "SELECT pg_advisory_xact_lock(hashtext($1))",
        &[&format!("qilin relay {schema}")],
    )
    .await
    .map_err(error)?;
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
    .map_err(error)?;
    tx.commit().await.map_err(error)
}

/// Handles what the listening connection hears: a command to run (`run ID`), or the outcome of
/// one this process sent (`done ID`).
fn heard(runner: &Runner, waiting_senders: &Waiting, payload: &str) {
    match payload.split_once(' ') {
        Some(("run", id)) => {
            if let Ok(id) = id.parse::<i64>() {
                let runner = runner.clone();
                tokio::spawn(async move { runner.run(id).await });
            }
        }
        Some(("done", id)) => {
            if let Ok(id) = id.parse::<i64>()
                && let Some(done) = waiting(waiting_senders).remove(&id)
            {
                let _ = done.send(());
            }
        }
        _ => {}
    }
}

/// Runs the commands relayed to this process.
#[derive(Clone)]
struct Runner {
    pool: Pool,
    owner: String,
    handler: RelayHandler,
}

impl Runner {
    /// Runs every command for this process that nobody took yet.
    fn run_pending(&self) {
        let runner = self.clone();
        tokio::spawn(async move {
            let Ok(client) = runner.pool.get().await else {
                return;
            };
            let Ok(rows) = client
                .query(
                    "SELECT id FROM server_commands WHERE target = $1 AND outcome IS NULL",
                    &[&runner.owner],
                )
                .await
            else {
                return;
            };
            for id in rows.iter().filter_map(|row| row.try_get::<_, i64>(0).ok()) {
                let next = runner.clone();
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
        let (Ok(sender), Ok(session), Ok(command)) = (
            row.try_get::<_, String>(0),
            row.try_get::<_, String>(1),
            row.try_get::<_, String>(2),
        ) else {
            return;
        };
        let outcome = (self.handler)(session, command).await;
        let Ok(tx) = client.transaction().await else {
            return;
        };
        let stored = tx
            .execute(
                "UPDATE server_commands SET outcome = $2 WHERE id = $1",
                &[&id, &outcome],
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
