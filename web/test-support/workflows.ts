// Test helpers: workflow runs and their steps on the wire shapes (`WorkflowRun`,
// `WorkflowStep`), hand-made.

/** A call step on the wire: `agent` ended `ok` unless `overrides` say otherwise. */
export function callStep(index: number, overrides: Record<string, unknown> = {}) {
  return {
    index,
    kind: 'call',
    callId: `call_w${index}`,
    tool: 'agent',
    status: 'ok',
    title: `Review part ${index}`,
    replayed: false,
    at: `2026-03-04T10:00:0${index}Z`,
    ...overrides,
  };
}

/** A report step on the wire: a section titled `title` with Markdown `text`. */
export function reportStep(index: number, title: string, text: string) {
  return { index, kind: 'report', title, text, replayed: false, at: `2026-03-04T10:00:0${index}Z` };
}

/** A run on the wire: `review` completed with three parallel agents and a report section. */
export function wireRun(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    runId: 'wf_1',
    workflow: 'review',
    description: 'Review a change in three parts, then sum up',
    args: { base: 'main' },
    status: 'completed',
    steps: [
      callStep(0),
      callStep(1),
      callStep(2),
      reportStep(3, 'Summary', 'All three parts **pass**; one nit in `upload.rs`.'),
    ],
    result: { verdict: 'approve' },
    startedAt: '2026-03-04T10:00:00Z',
    endedAt: '2026-03-04T10:02:05Z',
    durationMs: 125_000,
    ...overrides,
  };
}
