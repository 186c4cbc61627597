//! Auto review: a reviewer model that allows or denies a call, with a reason a person reads.
//!
//! A call the agent's review policy sends to the reviewer gets one `tool.reviewed` event (after
//! its `tool.start`, before it runs or is refused) carrying an [`AutoReviewRecord`]. A person
//! may allow a call the reviewer refused: that makes a [`ReviewGrant`] (`review.granted`), bound
//! to the session, the tool and the call's canonical arguments, used once. Too many denials
//! open the circuit breaker (`review.circuit_open`), which ends the turn.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// What the reviewer decided, or why it decided nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
pub enum ReviewVerdict {
    /// The call may run.
    Allow,
    /// The call is refused.
    Deny,
    /// The reviewer errored or answered something that is not a verdict.
    Failed,
    /// The reviewer did not answer in time.
    TimedOut,
}

impl ReviewVerdict {
    /// The verdict's wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            ReviewVerdict::Allow => "allow",
            ReviewVerdict::Deny => "deny",
            ReviewVerdict::Failed => "failed",
            ReviewVerdict::TimedOut => "timed_out",
        }
    }
}

/// How risky the reviewer judged a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
pub enum ReviewRisk {
    /// Little can go wrong.
    Low,
    /// Some harm is possible.
    Medium,
    /// Serious or irreversible harm is possible.
    High,
}

impl ReviewRisk {
    /// The risk's wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            ReviewRisk::Low => "low",
            ReviewRisk::Medium => "medium",
            ReviewRisk::High => "high",
        }
    }
}

/// What happened to a call whose review failed or timed out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "snake_case")]
pub enum ReviewFallback {
    /// A person attending the session was asked instead.
    AskedPerson,
    /// Nobody attends: the unattended policy decided (it refuses).
    UnattendedPolicy,
}

/// One review of one call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct AutoReviewRecord {
    /// The reviewer's model id (`provider:name`).
    pub reviewer: String,
    /// What it decided.
    pub verdict: ReviewVerdict,
    /// How risky it judged the call; absent when it failed or timed out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub risk: Option<ReviewRisk>,
    /// One line for the person: why it allowed or refused, or what went wrong.
    pub user_reason: String,
    /// Wall time of the review, in milliseconds.
    #[ts(type = "number")]
    pub latency_ms: u64,
    /// Input tokens the review used.
    #[ts(type = "number")]
    pub input_tokens: u64,
    /// Output tokens the review used.
    #[ts(type = "number")]
    pub output_tokens: u64,
    /// What happened after a failed or timed-out review.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub fallback: Option<ReviewFallback>,
}

/// A person's permission for one call the reviewer refused: the next call in the session with
/// the same tool and canonical arguments runs without review, once.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ReviewGrant {
    /// The grant's id, unique in its session.
    pub id: String,
    /// The refused call the person allowed.
    pub call_id: String,
    /// The tool it is bound to.
    pub tool_name: String,
    /// The canonical arguments it is bound to.
    #[ts(type = "unknown")]
    pub arguments: serde_json::Value,
    /// When it was made, RFC 3339 UTC.
    pub granted_at: String,
    /// The call that used it, once one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub used_by: Option<String>,
}

/// The `tool.reviewed` event: the reviewer judged a call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ToolReviewedEvent {
    /// The reviewed call.
    pub call_id: String,
    /// The `run_code` call that made it, for a code-mode call.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub parent_call_id: Option<String>,
    /// The review.
    pub review: AutoReviewRecord,
}

/// The `review.granted` event: a person allowed a refused call (or, with `usedBy` set, a
/// retry used the grant).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ReviewGrantedEvent {
    /// The grant.
    pub grant: ReviewGrant,
}

/// The `review.circuit_open` event: too many denials; the turn ends interrupted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ReviewCircuitOpenEvent {
    /// The turn it paused.
    pub turn_id: String,
    /// Denials in a row in that turn.
    pub denials_in_a_row: u32,
    /// Denials among the session's last 50 reviews.
    pub denials_in_window: u32,
    /// What the person is told.
    pub message: String,
}

/// One line of `GET /api/sessions/{id}/reviews`: a reviewed call that did not run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ReviewEntry {
    /// The call.
    pub call_id: String,
    /// Its tool.
    pub tool_name: String,
    /// Its arguments.
    #[ts(type = "unknown")]
    pub arguments: serde_json::Value,
    /// Its review.
    pub review: AutoReviewRecord,
    /// When it was reviewed, RFC 3339 UTC.
    pub at: String,
    /// Whether a person allowed it afterwards.
    pub granted: bool,
}

/// What `GET /api/sessions/{id}/reviews` returns.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase")]
pub struct ReviewList {
    /// Reviewed calls that were refused or failed, newest first, at most 50.
    pub reviews: Vec<ReviewEntry>,
}

/// `POST /api/sessions/{id}/reviews/{callId}/allow`: allow a call the reviewer refused.
#[derive(Debug, Clone, Default, Serialize, Deserialize, JsonSchema, TS)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AllowCall {
    /// Queue a turn telling the model it may run the call again (default true).
    #[serde(default)]
    #[ts(optional)]
    pub retry: Option<bool>,
}
