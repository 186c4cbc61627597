// Test helpers: loop records and iteration reports on the wire shapes (`LoopRecord`,
// `LoopIteration`), hand-made.

/** An iteration report on the wire: number `number`, finished unless `overrides` say otherwise. */
export function wireIteration(
  number: number,
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    number,
    sessionId: `ses_iter_${number}`,
    status: 'finished',
    startedAt: `2026-03-03T09:0${number}:00Z`,
    endedAt: `2026-03-03T09:0${number}:40Z`,
    durationMs: 40_000,
    files: [
      { path: 'src/upload.rs', insertions: 12, deletions: 3, change: 'modified' },
      { path: 'tests/retry.rs', insertions: 30, deletions: 0, change: 'added' },
    ],
    checks: [{ id: 'test', conclusion: 'failure', summary: '11 passed, 1 failed' }],
    inputTokens: 12_000,
    outputTokens: 1_500,
    costUsd: 0.04,
    promiseSeen: false,
    outcome: 'check test failed (1 error); going on',
    ...overrides,
  };
}

/** A running iteration on the wire: started, nothing reported yet. */
export function runningIteration(number: number): Record<string, unknown> {
  return {
    number,
    sessionId: `ses_iter_${number}`,
    status: 'running',
    startedAt: `2026-03-03T09:0${number}:00Z`,
    inputTokens: 0,
    outputTokens: 0,
    promiseSeen: false,
  };
}

/** A loop record on the wire, running with no iterations unless `overrides` say otherwise. */
export function wireLoop(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    loopId: 'loop_1',
    prompt: 'Make the upload retry only on 5xx and timeouts; keep the tests green.',
    until: { checks: ['test'] },
    maxIterations: 5,
    freshContext: true,
    status: 'running',
    iterations: [],
    startedAt: '2026-03-03T09:00:00Z',
    inputTokens: 0,
    outputTokens: 0,
    ...overrides,
  };
}
