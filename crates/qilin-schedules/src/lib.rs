//! Qilin's scheduled-task tools: a session asks for a prompt to be run later, once or again and
//! again, by the server's scheduler.
//!
//! - `schedule_create` — `{prompt, cron? | every? | at?, timezone?, agent?, target?,
//!   catch_up?, expires?}`; refuses what it cannot honour (an invalid cron, naming the field; a
//!   time in the past; an interval under a minute; an unknown time zone; `expires` before the
//!   first fire) and answers with the schedule and its next three fires.
//! - `schedule_list` — the session's schedules, newest first, with their next fires and last
//!   run.
//! - `schedule_delete` — `{id}`; the schedule fires no more.
//!
//! The tools speak to the [`ScheduleService`] host service (`qilin_tool::Services`): the
//! session's store and id. Schedules are rows in the store; `qilin serve` fires them. Each
//! change is also told in the session's log (`schedule.created`, `schedule.deleted`).

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod tools;

pub use tools::{
    ScheduleCreate, ScheduleCreateArgs, ScheduleDelete, ScheduleDeleteArgs, ScheduleList,
    ScheduleListArgs,
};

use chrono::{SecondsFormat, Utc};
use qilin_protocol::schedules::{
    CreateSchedule, ScheduleCreatedEvent, ScheduleDeletedEvent, ScheduleRecord,
};
use qilin_protocol::{Event, EventBody};
use qilin_store::schedules::time::{MIN_INTERVAL_SECONDS, plan};
use qilin_store::{EventStore, StoreError};
use qilin_tool::{RegistryError, ToolContext, ToolError, ToolRegistry, ToolResult};
use std::sync::Arc;

/// Registers `schedule_create`, `schedule_list` and `schedule_delete`.
pub fn register_tools(registry: &mut ToolRegistry) -> Result<(), RegistryError> {
    registry.register(ScheduleCreate)?;
    registry.register(ScheduleList)?;
    registry.register(ScheduleDelete)?;
    Ok(())
}

/// Checks the agent a schedule names the way its runs will find it: `Err` says what is wrong
/// and which agents exist.
pub type AgentCheck = Arc<dyn Fn(&str) -> Result<(), String> + Send + Sync>;

/// The schedules of one session, as a host service the tools look up. The tool, the server's
/// route and the terminal's `qilin schedules` all create and delete through it, and tell the
/// session's log with [`created_event`] and [`deleted_event`].
#[derive(Clone)]
pub struct ScheduleService {
    store: Arc<dyn EventStore>,
    session_id: String,
    min_interval: u64,
    check_agent: AgentCheck,
}

impl ScheduleService {
    /// The schedules of session `session_id` in `store`; `check_agent` refuses an agent name
    /// the runs could not find.
    pub fn new(
        store: Arc<dyn EventStore>,
        session_id: impl Into<String>,
        check_agent: AgentCheck,
    ) -> Self {
        ScheduleService {
            store,
            session_id: session_id.into(),
            min_interval: MIN_INTERVAL_SECONDS,
            check_agent,
        }
    }

    /// The service of the call's session, or why there is none.
    pub(crate) fn of(cx: &ToolContext) -> ToolResult<Arc<ScheduleService>> {
        cx.service::<ScheduleService>().ok_or_else(|| {
            ToolError::failed(
                "schedules are not available in this runtime (its host keeps no store for them)",
            )
        })
    }

    /// Checks and stores a new schedule of the session.
    pub async fn create(&self, request: &CreateSchedule) -> ToolResult<ScheduleRecord> {
        if let Some(agent) = request.agent.as_deref().map(str::trim)
            && !agent.is_empty()
        {
            (self.check_agent)(agent)
                .map_err(|err| ToolError::invalid_arguments(format!("`agent`: {err}")))?;
        }
        let mut planned = plan(request, Utc::now(), self.min_interval)
            .map_err(|err| ToolError::invalid_arguments(err.0))?;
        planned.record.id = format!("sch-{:012x}", fastrand::u64(..) >> 16);
        planned.record.session_id = self.session_id.clone();
        self.store
            .create_schedule(&planned.record, planned.first_fire)
            .await
            .map_err(|err| ToolError::failed(format!("the schedule was not stored: {err}")))?;
        Ok(planned.record)
    }

    /// The session's schedules, newest first.
    pub async fn list(&self) -> ToolResult<Vec<ScheduleRecord>> {
        self.store
            .list_schedules(Some(&self.session_id))
            .await
            .map_err(|err| ToolError::failed(format!("the schedules could not be read: {err}")))
    }

    /// Deletes one of the session's schedules.
    pub async fn delete(&self, id: &str) -> ToolResult<ScheduleRecord> {
        let unknown = || {
            ToolError::invalid_arguments(format!(
                "this session has no schedule `{id}`: `schedule_list` lists its schedules"
            ))
        };
        let existing = self
            .store
            .schedule(id)
            .await
            .map_err(|err| ToolError::failed(format!("the schedule could not be read: {err}")))?
            .ok_or_else(unknown)?;
        if existing.session_id != self.session_id {
            return Err(unknown());
        }
        self.store
            .delete_schedule(id)
            .await
            .map_err(|err| ToolError::failed(format!("the schedule was not deleted: {err}")))?
            .ok_or_else(unknown)
    }
}

/// The `schedule.created` a new schedule records in its session's log.
pub fn created_event(schedule: &ScheduleRecord) -> EventBody {
    EventBody::ScheduleCreated(ScheduleCreatedEvent {
        schedule: schedule.clone(),
    })
}

/// The `schedule.deleted` a deleted schedule records in its session's log.
pub fn deleted_event(schedule: &ScheduleRecord) -> EventBody {
    EventBody::ScheduleDeleted(ScheduleDeletedEvent {
        schedule_id: schedule.id.clone(),
    })
}

/// Appends `body` to the stored log of session `session`, one no process runs (the
/// terminal's `qilin schedules`, working on the store directly). Refused by the store when
/// the log moved meanwhile (a process writing it).
pub async fn append_to_stored_log(
    store: &dyn EventStore,
    session: &str,
    body: EventBody,
) -> Result<(), StoreError> {
    let info = store
        .session(session)
        .await?
        .ok_or_else(|| StoreError::UnknownSession(session.to_string()))?;
    let event = Event {
        seq: info.head_seq + 1,
        time: Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true),
        body,
    };
    store.append(session, &[event]).await.map(|_| ())
}
