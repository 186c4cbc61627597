//! Stopping blocking work when the call that started it ends early.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Sets the flag when the call's future is dropped (cancelled or timed out), so the blocking
/// work that polls the flag stops.
pub struct StopOnDrop(pub Arc<AtomicBool>);

impl Drop for StopOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}
