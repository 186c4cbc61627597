//! [`LiveTree`]: a session's conversation tree, folded from its stored events and brought up to
//! date with the events stored since; and [`LiveTrees`], the trees of the sessions a host looked
//! at lately, so a snapshot of a long session reads only what is new.

use crate::RuntimeError;
use parking_lot::{Mutex, MutexGuard};
use qilin_agent::{ConversationTree, RequestNode, ToolNode, TurnItem};
use qilin_store::EventStore;
use std::collections::HashMap;
use std::sync::Arc;

/// The most sessions whose tree a host keeps.
const KEPT: usize = 64;

/// Events read from the store at once while folding.
const PAGE: usize = 2_000;

/// A session's tree and the `seq` of the last event folded into it.
#[derive(Debug, Clone, Default)]
pub struct LiveTree {
    /// The `seq` of the last event folded in (0 before any).
    pub head_seq: u64,
    /// The conversation, folded from the stored events up to `head_seq`.
    pub tree: ConversationTree,
}

impl LiveTree {
    /// Folds in every event of session `id` stored after [`LiveTree::head_seq`].
    pub async fn catch_up(&mut self, store: &dyn EventStore, id: &str) -> Result<(), RuntimeError> {
        loop {
            let events = store.read(id, self.head_seq, PAGE).await?;
            let Some(last) = events.last() else {
                return Ok(());
            };
            self.head_seq = last.seq;
            for event in &events {
                self.tree.apply(event);
            }
            if events.len() < PAGE {
                return Ok(());
            }
        }
    }

    /// The turn still running, if one is.
    pub fn active_turn(&self) -> Option<String> {
        self.tree
            .turns
            .last()
            .filter(|turn| turn.finished.is_none())
            .map(|turn| turn.turn_id.clone())
    }

    /// The request `request_id`, wherever it sits in the tree.
    pub fn request(&self, request_id: &str) -> Option<&RequestNode> {
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
        self.tree.turns.iter().rev().find_map(|turn| {
            turn.items.iter().find_map(|item| match item {
                TurnItem::Tool { node } => within(node, request_id),
                _ => None,
            })
        })
    }
}

/// The kept trees, by session.
#[derive(Default)]
pub(crate) struct LiveTrees {
    kept: Mutex<HashMap<String, Arc<tokio::sync::Mutex<LiveTree>>>>,
}

impl LiveTrees {
    fn kept(&self) -> MutexGuard<'_, HashMap<String, Arc<tokio::sync::Mutex<LiveTree>>>> {
        self.kept.lock()
    }

    /// Reads session `id`'s tree with every event stored now folded in, through `read` (the
    /// tree stays where it is kept: a reader copies only what it needs of it).
    pub(crate) async fn current<T>(
        &self,
        store: &dyn EventStore,
        id: &str,
        read: impl FnOnce(&LiveTree) -> T,
    ) -> Result<T, RuntimeError> {
        let entry = {
            let mut kept = self.kept();
            if kept.len() >= KEPT && !kept.contains_key(id) {
                // Forget one that nobody is folding now; the next look folds it again.
                let idle = kept
                    .iter()
                    .find(|(_, live)| Arc::strong_count(live) == 1)
                    .map(|(key, _)| key.clone());
                if let Some(key) = idle {
                    kept.remove(&key);
                }
            }
            Arc::clone(kept.entry(id.to_string()).or_default())
        };
        let mut live = entry.lock().await;
        live.catch_up(store, id).await?;
        Ok(read(&live))
    }

    /// Forgets session `id`'s tree (it was deleted).
    pub(crate) fn forget(&self, id: &str) {
        self.kept().remove(id);
    }

    /// How many trees are kept.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.kept().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use qilin_protocol::{Event, EventBody, FinishReason};
    use qilin_store::{MemoryStore, NewSession};

    fn event(seq: u64, body: EventBody) -> Event {
        Event {
            seq,
            time: "2026-01-01T00:00:00Z".into(),
            body,
        }
    }

    fn turn_started(seq: u64, turn: &str) -> Event {
        event(
            seq,
            EventBody::TurnStarted {
                turn_id: turn.into(),
                prompt: format!("prompt of {turn}"),
                client_turn_id: None,
            },
        )
    }

    fn turn_finished(seq: u64, turn: &str) -> Event {
        event(
            seq,
            EventBody::TurnFinished {
                turn_id: turn.into(),
                reason: FinishReason::Completed,
                message: None,
            },
        )
    }

    async fn store_with(id: &str) -> MemoryStore {
        let store = MemoryStore::new();
        store
            .create_session(NewSession {
                id: id.into(),
                workspace: "/tmp".into(),
                agent: "a".into(),
                agent_file: None,
                model: "scripted:x".into(),
                created_at: "2026-01-01T00:00:00Z".into(),
                parent_session_id: None,
                parent_call_id: None,
            })
            .await
            .unwrap();
        store
    }

    #[tokio::test]
    async fn a_kept_tree_folds_only_what_was_stored_since() {
        let store = store_with("s").await;
        store
            .append("s", &[turn_started(1, "t1"), turn_finished(2, "t1")])
            .await
            .unwrap();
        let trees = LiveTrees::default();
        let (head, turns, active) = trees
            .current(&store, "s", |live| {
                (live.head_seq, live.tree.turns.len(), live.active_turn())
            })
            .await
            .unwrap();
        assert_eq!((head, turns, active), (2, 1, None));

        store.append("s", &[turn_started(3, "t2")]).await.unwrap();
        let (head, turns, active) = trees
            .current(&store, "s", |live| {
                (live.head_seq, live.tree.turns.len(), live.active_turn())
            })
            .await
            .unwrap();
        assert_eq!((head, turns, active), (3, 2, Some("t2".to_string())));

        // The same fold as folding everything at once.
        let whole = store.read("s", 0, 100).await.unwrap();
        let kept = trees
            .current(&store, "s", |live| live.tree.clone())
            .await
            .unwrap();
        assert_eq!(kept, ConversationTree::from_events(&whole));

        trees.forget("s");
        assert_eq!(trees.len(), 0);
    }

    #[tokio::test]
    async fn no_more_trees_are_kept_than_the_limit() {
        let store = MemoryStore::new();
        let trees = LiveTrees::default();
        for n in 0..KEPT + 5 {
            let id = format!("s{n}");
            store
                .create_session(NewSession {
                    id: id.clone(),
                    workspace: "/tmp".into(),
                    agent: "a".into(),
                    agent_file: None,
                    model: "scripted:x".into(),
                    created_at: "2026-01-01T00:00:00Z".into(),
                    parent_session_id: None,
                    parent_call_id: None,
                })
                .await
                .unwrap();
            trees.current(&store, &id, |_| ()).await.unwrap();
        }
        assert_eq!(trees.len(), KEPT);
    }
}
