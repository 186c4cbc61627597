//! A session's loops, folded from its log: `loop.started` adds one, `loop.iteration` adds or
//! replaces an iteration (by number), `loop.finished` replaces the whole loop.

use qilin_protocol::loops::LoopRecord;
use qilin_protocol::{Event, EventBody};

/// The loops `events` record, oldest first, each as its last events leave it.
pub fn fold_loops(events: &[Event]) -> Vec<LoopRecord> {
    let mut loops: Vec<LoopRecord> = Vec::new();
    for event in events {
        match &event.body {
            EventBody::LoopStarted(started) => loops.push(started.record.clone()),
            EventBody::LoopIteration(changed) => {
                let Some(record) = loops
                    .iter_mut()
                    .find(|record| record.loop_id == changed.loop_id)
                else {
                    continue;
                };
                let iteration = changed.iteration.clone();
                match record
                    .iterations
                    .iter_mut()
                    .find(|known| known.number == iteration.number)
                {
                    Some(known) => *known = iteration,
                    None => record.iterations.push(iteration),
                }
                record.input_tokens = record.iterations.iter().map(|i| i.input_tokens).sum();
                record.output_tokens = record.iterations.iter().map(|i| i.output_tokens).sum();
            }
            EventBody::LoopFinished(finished) => {
                match loops
                    .iter_mut()
                    .find(|record| record.loop_id == finished.record.loop_id)
                {
                    Some(record) => *record = finished.record.clone(),
                    None => loops.push(finished.record.clone()),
                }
            }
            _ => {}
        }
    }
    loops
}
