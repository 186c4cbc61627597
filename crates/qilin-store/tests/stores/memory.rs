//! The conformance suite on [`MemoryStore`].

use crate::support::Harness;
use qilin_store::MemoryStore;
use std::sync::Arc;

async fn open() -> Harness {
    Harness {
        store: Arc::new(MemoryStore::new()),
        cleanup: None,
        _folder: None,
    }
}

conformance!(open);
