//! The TypeScript definitions of the wire types, for the web client.
//!
//! `bindings/qilin-protocol.ts` at the repository root is this module's output; the test
//! `typescript_bindings_are_current` fails when it is stale, and regenerates it when run with
//! `QILIN_UPDATE_BINDINGS=1`.

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
        SessionContext::decl(&cfg),
        Environment::decl(&cfg),
        MemoryFile::decl(&cfg),
        SessionGrant::decl(&cfg),
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
    out
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    #[test]
    fn typescript_bindings_are_current() {
        let path =
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../bindings/qilin-protocol.ts");
        let fresh = super::bindings();
        if std::env::var_os("QILIN_UPDATE_BINDINGS").is_some() {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
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
