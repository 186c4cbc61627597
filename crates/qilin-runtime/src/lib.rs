//! Qilin's sessions, as a library every host shares.
//!
//! A [`Runtime`] holds what the sessions of one process share: the [`EventStore`] their logs
//! are kept in and the code-mode worker pool. [`Runtime::session`] gives a [`SessionBuilder`]
//! (workspace, agent, model, who answers requests); `build` gives a [`SessionHandle`], the one
//! interface a host needs:
//!
//! - [`SessionHandle::submit`] starts a turn, which runs to its end whether or not anyone
//!   watches; [`SessionHandle::interrupt`] ends it early, every call still getting its result;
//! - [`SessionHandle::subscribe_from`] follows the log from any `seq`: stored events, then
//!   live ones, each exactly once — every event is committed to the store before anyone sees
//!   it;
//! - [`SessionHandle::resolve`] answers an approval or a question (`request.opened` in the
//!   log), from any task or client; the first answer wins;
//! - [`SessionHandle::compact`] has the model summarise the conversation between turns; the
//!   summary (`context.compacted` in the log) then stands for everything before it;
//! - [`SessionHandle::snapshot`] folds the stored log into the call tree clients render.
//!
//! [`Runtime::resume`] continues a stored session in a new process: the model receives
//! exactly the messages an uninterrupted session would have sent, because the loop's history
//! is itself folded from the log. [`Runtime::recover`] first closes what a killed process left
//! open (calls, requests, the step and the turn, as interrupted).
//!
//! An application adds tools of its own with [`Runtime::builder`] (every session) or
//! [`SessionBuilder::tool`] (one session): an agent file mounts them by name like the
//! built-ins, `run_code` reaches them, and their calls pass the same execution layer. [`check`]
//! lints a workspace with them, as `qilin check` lints Qilin's.
//!
//! A host running many sessions — the server, subagents, schedules, workflows — hosts them
//! through a [`SessionHost`]: sessions opened by id under a lease (one process drives a session
//! at a time when several share a database), closed when idle, recovered when their process
//! died, and their conversation trees kept folded ([`LiveTree`]) for the snapshots clients
//! render.
//!
//! A session starts children (subagents, the `agent` tools of `qilin-subagents`) through the
//! same [`SessionBuilder`]: each an ordinary session linked to its parent, bounded by the
//! runtime ([`ChildLimits`]: depth, running children, steps; its tools within the parent's,
//! its sandbox never wider, the parent's review rules applied too), interrupted with it.
//!
//! A session keeps a goal (the `goal_*` tools of `qilin-goals`, or a host's
//! [`SessionHandle::set_goal`]) as events in its log; while the goal is active the session
//! starts continuation turns by itself ([`CONTINUATION_PROMPT`]) until the goal is settled,
//! paused, or its budget spent.
//!
//! [`EventStore`]: qilin_store::EventStore

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod assembly;
mod builtin;
mod check;
mod children;
mod context;
mod error;
mod goals;
mod host;
mod loops;
mod mount;
mod recovery;
mod review;
mod runtime;
mod session;

pub use assembly::{
    builtin_registry, builtin_skills_root, discover_skills, discover_skills_with, workspace_of,
};
pub use builtin::{DEFAULT_AGENT, TOOLS_AGENT, builtin_agent, builtin_agents, find_agent};
pub use check::{check, tool_catalog};
pub use children::ChildLimits;
pub use context::{MAX_MEMORY_BYTES, MEMORY_FILES, project_context, repository_root};
pub use error::{AllowCallError, CompactError, RuntimeError, SubmitError};
pub use goals::{
    CONTINUATION_PROMPT, DEFAULT_GOAL_TURNS, GoalError, STALL_TURNS, continuation_prompt,
};
pub use host::{
    Clock, DEFAULT_RUN_BUDGET, DEFAULT_RUN_TOKENS, HostError, LeaseTiming, LiveTree, Placement,
    SchedulerSettings, SessionHost, SystemClock, schedule_agent, schedule_service, workspace_model,
    workspace_script,
};
pub use mount::AgentSource;
pub use qilin_goals::NewGoal;
pub use recovery::{Closing, Dangling};
pub use review::{
    AllowError, MAX_LISTED_REVIEWS, ParsedVerdict, REVIEWER_SYSTEM, parse_verdict, refused_call,
    retry_prompt, review_entries,
};
pub use runtime::{CodeSandbox, Runtime, RuntimeBuilder, SANDBOX_HELPER_ARGS};
pub use session::{
    DEFAULT_CALL_TIMEOUT, DEFAULT_MAX_STEPS, ModelChoice, SessionBuilder, SessionHandle,
    SessionPrompt, SessionSnapshot, TurnHandle,
};
