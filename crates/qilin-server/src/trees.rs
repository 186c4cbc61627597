//! [`Trees`]: the conversation tree of recently viewed sessions, kept folded and brought up to
//! date with the events stored since, so a snapshot of a long session reads only what is new.

use crate::error::ApiError;
use qilin_agent::{ConversationTree, RequestNode, ToolNode, TurnItem};
use qilin_store::EventStore;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The most sessions whose tree is kept.
const KEPT: usize = 64;

/// Events read from the store at once while folding.
const PAGE: usize = 2_000;

/// A session's tree and the `seq` of the last event folded into it.
#[derive(Default)]
pub struct Folded {
    /// The `seq` folded up to.
    pub head_seq: u64,
    /// The tree.
    pub tree: ConversationTree,
}

/// The kept trees.
#[derive(Default)]
pub struct Trees {
    kept: Mutex<HashMap<String, Arc<tokio::sync::Mutex<Folded>>>>,
}

impl Trees {
    /// Reads session `id`'s tree with every event stored now folded in, through `read` (the
    /// tree stays where it is kept: a reader copies only what it needs of it).
    pub async fn current<T>(
        &self,
        store: &dyn EventStore,
        id: &str,
        read: impl FnOnce(&Folded) -> T,
    ) -> Result<T, ApiError> {
        let entry = {
            let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
            if kept.len() >= KEPT && !kept.contains_key(id) {
                // Forget one that nobody is folding now; the next look folds it again.
                let idle = kept
                    .iter()
                    .find(|(_, folded)| Arc::strong_count(folded) == 1)
                    .map(|(key, _)| key.clone());
                if let Some(key) = idle {
                    kept.remove(&key);
                }
            }
            Arc::clone(kept.entry(id.to_string()).or_default())
        };
        let mut folded = entry.lock().await;
        loop {
            let events = store.read(id, folded.head_seq, PAGE).await?;
            let Some(last) = events.last() else { break };
            folded.head_seq = last.seq;
            for event in &events {
                folded.tree.apply(event);
            }
            if events.len() < PAGE {
                break;
            }
        }
        Ok(read(&folded))
    }

    /// Forgets session `id`'s tree (it was deleted).
    pub fn forget(&self, id: &str) {
        self.kept
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(id);
    }
}

/// The turn of `tree` still running, if one is.
pub fn active_turn(tree: &ConversationTree) -> Option<String> {
    tree.turns
        .last()
        .filter(|turn| turn.finished.is_none())
        .map(|turn| turn.turn_id.clone())
}

/// The request `request_id` wherever it sits in `tree`.
pub fn find_request<'a>(tree: &'a ConversationTree, request_id: &str) -> Option<&'a RequestNode> {
    fn within<'a>(node: &'a ToolNode, request_id: &str) -> Option<&'a RequestNode> {
        node.requests
            .iter()
            .find(|request| request.request_id == request_id)
            .or_else(|| {
                node.sub_calls
                    .iter()
                    .find_map(|sub| within(sub, request_id))
            })
    }
    tree.turns.iter().rev().find_map(|turn| {
        turn.items.iter().find_map(|item| match item {
            TurnItem::Tool { node } => within(node, request_id),
            _ => None,
        })
    })
}
