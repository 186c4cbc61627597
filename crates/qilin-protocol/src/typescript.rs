//! The TypeScript definitions of the wire types, for the web client.
//!
//! `web/packages/protocol/src/generated.ts` (the `@qilin-agent/protocol` package) is this
//! module's output, the one copy: the test `typescript_bindings_are_current` fails when it is
//! stale, and regenerates it when run with `QILIN_UPDATE_BINDINGS=1`.

use crate::*;
use ts_rs::{Config, TS};

/// Renders every wire type as one TypeScript module.
pub fn bindings() -> String {
    let cfg = Config::new();
    let decls = [
        Event::decl(&cfg),
        EventBody::decl(&cfg),
        SessionStartedEvent::decl(&cfg),
        AgentInfo::decl(&cfg),
        StopReason::decl(&cfg),
        FinishReason::decl(&cfg),
        Usage::decl(&cfg),
        CallerKind::decl(&cfg),
        CallStatus::decl(&cfg),
        ToolPreparingEvent::decl(&cfg),
        ToolStartEvent::decl(&cfg),
        ToolProgressEvent::decl(&cfg),
        ToolResultEvent::decl(&cfg),
        RequestOpenedEvent::decl(&cfg),
        RequestAsk::decl(&cfg),
        RequestResolvedEvent::decl(&cfg),
        RequestResolution::decl(&cfg),
        ContextCompactedEvent::decl(&cfg),
        Question::decl(&cfg),
        Answer::decl(&cfg),
        ContentBlock::decl(&cfg),
        ErrorCode::decl(&cfg),
        CallPresentation::decl(&cfg),
        Detail::decl(&cfg),
        ProjectContext::decl(&cfg),
        Environment::decl(&cfg),
        MemoryFile::decl(&cfg),
        SessionGrant::decl(&cfg),
        Phase::decl(&cfg),
        ToolOutcome::decl(&cfg),
        ToolNode::decl(&cfg),
        RequestNode::decl(&cfg),
        TurnItem::decl(&cfg),
        TurnNode::decl(&cfg),
        CompactionNode::decl(&cfg),
        ChildLink::decl(&cfg),
        agents::ChildStatus::decl(&cfg),
        agents::ChildUsage::decl(&cfg),
        agents::ChildRecord::decl(&cfg),
        agents::AgentWaitOutput::decl(&cfg),
        agents::AgentListOutput::decl(&cfg),
        agents::Delivery::decl(&cfg),
        agents::AgentSendOutput::decl(&cfg),
        agents::AgentStartedEvent::decl(&cfg),
        agents::AgentFinishedEvent::decl(&cfg),
        agents::AgentDeliveredEvent::decl(&cfg),
        agents::AgentMessageEvent::decl(&cfg),
        tasks::TaskStatus::decl(&cfg),
        tasks::TaskNote::decl(&cfg),
        tasks::TaskRecord::decl(&cfg),
        tasks::TaskCreatedEvent::decl(&cfg),
        tasks::TaskUpdatedEvent::decl(&cfg),
        tasks::TaskCreateOutput::decl(&cfg),
        tasks::TaskUpdateOutput::decl(&cfg),
        tasks::TaskListOutput::decl(&cfg),
        goals::GoalStatus::decl(&cfg),
        goals::PauseCause::decl(&cfg),
        goals::GoalActor::decl(&cfg),
        goals::GoalBudget::decl(&cfg),
        goals::GoalUsage::decl(&cfg),
        goals::GoalRecord::decl(&cfg),
        goals::GoalCreatedEvent::decl(&cfg),
        goals::GoalUpdatedEvent::decl(&cfg),
        goals::GoalGetOutput::decl(&cfg),
        goals::GoalVerdict::decl(&cfg),
        goals::GoalUpdateOutput::decl(&cfg),
        goals::SetGoal::decl(&cfg),
        goals::ResumeGoal::decl(&cfg),
        loops::LoopUntil::decl(&cfg),
        loops::LoopBudget::decl(&cfg),
        loops::LoopStatus::decl(&cfg),
        loops::LoopStopReason::decl(&cfg),
        loops::IterationStatus::decl(&cfg),
        loops::FileChange::decl(&cfg),
        loops::IterationCheck::decl(&cfg),
        loops::LoopIteration::decl(&cfg),
        loops::LoopRecord::decl(&cfg),
        loops::LoopStartedEvent::decl(&cfg),
        loops::LoopIterationEvent::decl(&cfg),
        loops::LoopFinishedEvent::decl(&cfg),
        loops::StartLoop::decl(&cfg),
        loops::StopLoop::decl(&cfg),
        loops::LoopStatusQuery::decl(&cfg),
        loops::LoopOutput::decl(&cfg),
        loops::LoopStatusOutput::decl(&cfg),
        schedules::ScheduleTarget::decl(&cfg),
        schedules::CatchUp::decl(&cfg),
        schedules::ScheduleStatus::decl(&cfg),
        schedules::RunOutcome::decl(&cfg),
        schedules::ScheduleRun::decl(&cfg),
        schedules::ScheduleRecord::decl(&cfg),
        schedules::ScheduleCreatedEvent::decl(&cfg),
        schedules::ScheduleDeletedEvent::decl(&cfg),
        schedules::ScheduleFiredEvent::decl(&cfg),
        schedules::ScheduleFinishedEvent::decl(&cfg),
        schedules::ScheduleOutput::decl(&cfg),
        schedules::ScheduleListOutput::decl(&cfg),
        schedules::CreateSchedule::decl(&cfg),
        review::ReviewVerdict::decl(&cfg),
        review::ReviewRisk::decl(&cfg),
        review::ReviewFallback::decl(&cfg),
        review::AutoReviewRecord::decl(&cfg),
        review::ReviewGrant::decl(&cfg),
        review::ToolReviewedEvent::decl(&cfg),
        review::ReviewGrantedEvent::decl(&cfg),
        review::ReviewCircuitOpenEvent::decl(&cfg),
        review::ReviewEntry::decl(&cfg),
        review::ReviewList::decl(&cfg),
        review::AllowCall::decl(&cfg),
        api::SessionStatus::decl(&cfg),
        api::SessionInfo::decl(&cfg),
        api::SessionPage::decl(&cfg),
        api::SessionView::decl(&cfg),
        api::CreateSession::decl(&cfg),
        api::UpdateSession::decl(&cfg),
        api::ListSessions::decl(&cfg),
        api::StartTurn::decl(&cfg),
        api::TurnAccepted::decl(&cfg),
        api::Interrupted::decl(&cfg),
        api::EventsQuery::decl(&cfg),
        api::EventPage::decl(&cfg),
        api::StreamQuery::decl(&cfg),
        api::MultiStreamQuery::decl(&cfg),
        api::SessionEvent::decl(&cfg),
        api::SnapshotQuery::decl(&cfg),
        api::Snapshot::decl(&cfg),
        api::OpenRequests::decl(&cfg),
        api::RequestAnswer::decl(&cfg),
        api::RequestResolved::decl(&cfg),
        api::FileQuery::decl(&cfg),
        api::TextFile::decl(&cfg),
        api::AuthRequest::decl(&cfg),
        api::ServerInfo::decl(&cfg),
        api::EndReason::decl(&cfg),
        api::StreamEnd::decl(&cfg),
        api::ErrorBody::decl(&cfg),
        api::SearchSessions::decl(&cfg),
        api::SearchPage::decl(&cfg),
        sessions::HitField::decl(&cfg),
        sessions::SearchHit::decl(&cfg),
        sessions::SessionSearchOutput::decl(&cfg),
        sessions::EventLine::decl(&cfg),
        sessions::SessionEventsOutput::decl(&cfg),
        sessions::TrajectoryKind::decl(&cfg),
        sessions::TrajectoryStatus::decl(&cfg),
        sessions::TrajectoryNode::decl(&cfg),
        sessions::SessionTrajectoryOutput::decl(&cfg),
        SpillNotice::decl(&cfg),
        checks::CheckStatus::decl(&cfg),
        checks::CheckConclusion::decl(&cfg),
        checks::AnnotationLevel::decl(&cfg),
        checks::CheckAnnotation::decl(&cfg),
        checks::CheckRun::decl(&cfg),
        checks::ChecksRunOutput::decl(&cfg),
        workflows::WorkflowStatus::decl(&cfg),
        workflows::WorkflowStepKind::decl(&cfg),
        workflows::WorkflowStep::decl(&cfg),
        workflows::WorkflowRun::decl(&cfg),
        workflows::WorkflowStartedEvent::decl(&cfg),
        workflows::WorkflowStepEvent::decl(&cfg),
        workflows::WorkflowFinishedEvent::decl(&cfg),
        workflows::WorkflowRunOutput::decl(&cfg),
        workflows::WorkflowStatusOutput::decl(&cfg),
    ];
    let mut out = String::from(
        "// Generated from the qilin-protocol crate; do not edit by hand.\n\
         // Regenerate: QILIN_UPDATE_BINDINGS=1 cargo test -p qilin-protocol typescript\n",
    );
    for decl in decls {
        out.push_str("\nexport ");
        out.push_str(&decl);
        out.push('\n');
    }
    let bounds = [
        (
            "The most annotations one check run carries.",
            "MAX_CHECK_ANNOTATIONS",
            crate::checks::MAX_ANNOTATIONS,
        ),
        (
            "The most bytes of a call's output shown live from its start.",
            "LIVE_HEAD_BYTES",
            crate::LIVE_HEAD_BYTES,
        ),
        (
            "The most bytes of a call's latest output shown live after its start.",
            "LIVE_TAIL_BYTES",
            crate::LIVE_TAIL_BYTES,
        ),
    ];
    for (doc, name, value) in bounds {
        out.push_str(&format!("\n/** {doc} */\nexport const {name} = {value};\n"));
    }
    let notice = [
        (
            "What a spill notice begins with, before the size.",
            "SPILL_NOTICE_OPEN",
            crate::spill::OPEN,
        ),
        (
            "What stands between a spill notice's size and its path.",
            "SPILL_NOTICE_MIDDLE",
            crate::spill::MIDDLE,
        ),
        (
            "What a spill notice ends with, after the path.",
            "SPILL_NOTICE_CLOSE",
            crate::spill::CLOSE,
        ),
    ];
    for (doc, name, value) in notice {
        // A JSON string is a TypeScript string literal.
        let literal = serde_json::Value::from(value).to_string();
        out.push_str(&format!(
            "\n/** {doc} */\nexport const {name} = {literal};\n"
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    #[test]
    fn typescript_bindings_are_current() {
        let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../../web/packages/protocol/src/generated.ts");
        let fresh = super::bindings();
        if std::env::var_os("QILIN_UPDATE_BINDINGS").is_some() {
            std::fs::write(&path, &fresh).unwrap();
            return;
        }
        let current = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            current == fresh,
            "{} is stale: run `QILIN_UPDATE_BINDINGS=1 cargo test -p qilin-protocol typescript` and commit it",
            path.display()
        );
    }
}
