//! [`LeaseTable`]: session leases kept in the process, for the stores only one process writes
//! (memory, SQLite), where every owner lives in this process.

use crate::Lease;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// Who holds each session's lease, and until when.
#[derive(Default)]
pub(crate) struct LeaseTable {
    leases: Mutex<HashMap<String, (String, Instant)>>,
}

impl LeaseTable {
    /// Grants the lease to `owner` when it is free, expired or `owner`'s already.
    pub(crate) fn acquire(&self, session: &str, owner: &str, ttl: Duration) -> Lease {
        let now = Instant::now();
        let mut leases = self.leases.lock();
        match leases.get(session) {
            Some((holder, until)) if holder != owner && *until > now => Lease::HeldBy {
                owner: holder.clone(),
            },
            _ => {
                let until = now
                    .checked_add(ttl)
                    .unwrap_or(now + Duration::from_secs(1 << 32));
                leases.insert(session.to_string(), (owner.to_string(), until));
                Lease::Acquired
            }
        }
    }

    /// Frees the lease if `owner` holds it.
    pub(crate) fn release(&self, session: &str, owner: &str) {
        let mut leases = self.leases.lock();
        if leases
            .get(session)
            .is_some_and(|(holder, _)| holder == owner)
        {
            leases.remove(session);
        }
    }

    /// Whether `owner` holds the lease of `session` now.
    pub(crate) fn holds(&self, session: &str, owner: &str) -> bool {
        self.leases
            .lock()
            .get(session)
            .is_some_and(|(holder, until)| holder == owner && *until > Instant::now())
    }

    /// Forgets a deleted session's lease.
    pub(crate) fn forget(&self, session: &str) {
        self.leases.lock().remove(session);
    }
}
