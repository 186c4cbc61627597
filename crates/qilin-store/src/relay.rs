//! [`CommandRelay`]: commands for a session that another process runs, carried to that process
//! by the store the processes share.
//!
//! With several processes on one database, a request may reach any of them, but a session's
//! turns run in the one process holding its lease. A command — start a turn, interrupt, answer
//! a request — must reach that owner. [`EventStore::connect_relay`](crate::EventStore::connect_relay)
//! gives a relay for stores several processes share (PostgreSQL); the host hands it a
//! [`RelayHandler`] that runs the commands other processes send to it, and calls
//! [`CommandRelay::forward`] to send its own. Commands and outcomes are texts the host chooses
//! (JSON, say): the store carries them and never reads them.

use async_trait::async_trait;
use futures_util::future::BoxFuture;
use std::sync::Arc;
use std::time::Duration;

/// Runs a command another process relayed to this one: `(session, command) → outcome`. The
/// outcome is sent back to the sender as it is; it must not be empty (an empty outcome marks a
/// command taken and not yet finished).
pub type RelayHandler = Arc<dyn Fn(String, String) -> BoxFuture<'static, String> + Send + Sync>;

/// Why a relayed command gave no outcome.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RelayError {
    /// The command could not be passed on: the database refused or failed.
    #[error("the command could not be passed to the process running the session: {0}")]
    Failed(String),
    /// The owner did not take the command within the wait; it was withdrawn, so it never takes
    /// effect.
    #[error(
        "the process running session `{session}` (`{target}`) did not take the command within \
         {} s; if it died, its lease runs out shortly and the next command takes the session over",
        waited.as_secs()
    )]
    NotTaken {
        /// The process the command was for.
        target: String,
        /// The session.
        session: String,
        /// How long the sender waited.
        waited: Duration,
    },
    /// The owner took the command but did not finish it within the wait; it may still take
    /// effect.
    #[error(
        "the process running session `{session}` (`{target}`) took the command but did not \
         finish it within {} s; it may still take effect",
        waited.as_secs()
    )]
    Unfinished {
        /// The process the command was for.
        target: String,
        /// The session.
        session: String,
        /// How long the sender waited.
        waited: Duration,
    },
}

/// Carries commands to the process that runs a session.
///
/// With several processes on one database, a request may reach any of them, but a session's
/// turns run in the one process holding its lease, so a command — start a turn, interrupt,
/// answer a request — must reach that owner. [`EventStore::connect_relay`](crate::EventStore::connect_relay)
/// gives a relay for a store several processes share (PostgreSQL); the host hands it a
/// [`RelayHandler`] that runs the commands other processes send to it, and calls
/// [`CommandRelay::forward`] to send its own. Commands and outcomes are texts the host chooses
/// (JSON, say): the store carries them and never reads them.
#[async_trait]
pub trait CommandRelay: Send + Sync {
    /// Runs `command` on `session` in the process named `target` (the owner of its lease), and
    /// gives the outcome that process's [`RelayHandler`] returned.
    async fn forward(
        &self,
        target: &str,
        session: &str,
        command: &str,
    ) -> Result<String, RelayError>;
}
