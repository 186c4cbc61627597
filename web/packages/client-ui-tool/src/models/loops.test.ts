// The loop card models and the fold of a session's `loop.*` events by loop id.
import { describe, expect, test, vi } from 'vitest';
import { inputAt, madeCall } from '../../../../test-support/calls';
import { runningIteration, wireIteration, wireLoop } from '../../../../test-support/loops';
import {
  LoopBook,
  changedLines,
  currentIteration,
  laterLoop,
  loopOfEvent,
  loopRow,
  loopStartModel,
  loopStatusModel,
  loopStopModel,
} from './loops';

const START_ARGS = {
  prompt: 'Make the upload retry only on 5xx and timeouts; keep the tests green.',
  until: { checks: ['test'] },
  max_iterations: 5,
};

describe('loopRow', () => {
  test('reads a record with its iterations in order, one per number', () => {
    const row = loopRow(
      wireLoop({
        iterations: [wireIteration(2), wireIteration(1), runningIteration(3)],
        budget: { tokens: 200_000, costUsd: 2.5 },
      }),
    );
    expect(row.iterations.map((iteration) => [iteration.number, iteration.status])).toEqual([
      [1, 'finished'],
      [2, 'finished'],
      [3, 'running'],
    ]);
    expect(row.budget).toEqual({ tokens: 200_000, costUsd: 2.5 });
    expect(row.checks).toEqual(['test']);
    expect(row.iterations[0]?.href).toBe('/sessions/ses_iter_1');
    expect(currentIteration(row)?.number).toBe(3);
    expect(row.iterations[0] && changedLines(row.iterations[0])).toEqual({
      insertions: 42,
      deletions: 3,
    });
  });

  test('a loop without fresh context links every iteration to its one session', () => {
    const row = loopRow(
      wireLoop({
        freshContext: false,
        iterations: [
          wireIteration(1, { sessionId: 'ses_loop' }),
          wireIteration(2, { sessionId: 'ses_loop' }),
          { ...runningIteration(3), sessionId: 'ses_loop' },
        ],
      }),
    );
    expect(row.freshContext).toBe(false);
    expect(row.iterations.map((iteration) => [iteration.number, iteration.href])).toEqual([
      [1, '/sessions/ses_loop'],
      [2, '/sessions/ses_loop'],
      [3, '/sessions/ses_loop'],
    ]);
    expect(loopRow(wireLoop({ freshContext: undefined })).freshContext).toBe(true);
  });

  test('refuses a finished loop without a reason, and data of another shape', () => {
    expect(() => loopRow(wireLoop({ status: 'finished' }))).toThrow(/says why it stopped/);
    expect(() => loopRow(wireLoop({ status: 'paused' }))).toThrow(/status/);
    expect(() => loopRow(wireLoop({ iterations: [wireIteration(0)] }))).toThrow(/counts from 1/);
    expect(() =>
      loopRow(wireLoop({ iterations: [wireIteration(1, { files: [{ path: 'a' }] })] })),
    ).toThrow(/insertions/);
    expect(() =>
      loopRow(wireLoop({ iterations: [{ ...runningIteration(1), endedAt: 'x' }] })),
    ).toThrow(/running iteration has no end/);
  });
});

describe('the fold of loop events', () => {
  test('an iteration reported at its start and again at its end is one row, the later report', () => {
    const book = new LoopBook();
    book.onEvents([{ type: 'loop.started', loop: wireLoop() }]);
    book.onEvents([{ type: 'loop.iteration', loopId: 'loop_1', iteration: runningIteration(1) }]);
    expect(book.get('loop_1')?.iterations.map((row) => row.status)).toEqual(['running']);
    book.onEvents([{ type: 'loop.iteration', loopId: 'loop_1', iteration: wireIteration(1) }]);
    book.onEvents([{ type: 'loop.iteration', loopId: 'loop_1', iteration: runningIteration(2) }]);
    const rows = book.get('loop_1')?.iterations ?? [];
    expect(rows.map((row) => [row.number, row.status])).toEqual([
      [1, 'finished'],
      [2, 'running'],
    ]);
    expect(rows[0]?.outcome).toBe('check test failed (1 error); going on');
  });

  test('a late running report never takes back an ended iteration', () => {
    const book = new LoopBook();
    book.onEvents([
      { type: 'loop.started', loop: wireLoop() },
      { type: 'loop.iteration', loopId: 'loop_1', iteration: wireIteration(1) },
      { type: 'loop.iteration', loopId: 'loop_1', iteration: runningIteration(1) },
    ]);
    expect(book.get('loop_1')?.iterations[0]?.status).toBe('finished');
  });

  test('iterations of a loop not known yet wait for its record', () => {
    const book = new LoopBook();
    book.onEvents([
      { type: 'loop.iteration', loopId: 'loop_1', iteration: wireIteration(1) },
      { type: 'loop.iteration', loopId: 'loop_1', iteration: runningIteration(2) },
    ]);
    expect(book.get('loop_1')).toBeUndefined();
    // A card that has the record the call returned sees them at once, the same object each read.
    const known = loopRow(wireLoop());
    expect(book.view(known).iterations.map((row) => row.number)).toEqual([1, 2]);
    expect(book.view(known)).toBe(book.view(known));
    expect(new LoopBook().view(known)).toBe(known);
    book.take([loopRow(wireLoop())]);
    expect(book.get('loop_1')?.iterations.map((row) => row.number)).toEqual([1, 2]);
  });

  test('loop.finished ends the loop; an older record read later does not undo it', () => {
    const book = new LoopBook();
    const finished = wireLoop({
      status: 'finished',
      stopReason: 'checks_passed',
      endedAt: '2026-03-03T09:04:00Z',
      iterations: [
        wireIteration(1),
        wireIteration(2),
        wireIteration(3, {
          checks: [{ id: 'test', conclusion: 'success' }],
          outcome: 'checks passed',
        }),
      ],
    });
    book.onEvents([{ type: 'loop.finished', loop: finished }]);
    book.take([loopRow(wireLoop({ iterations: [runningIteration(1)] }))]);
    const row = book.get('loop_1');
    expect(row?.status).toBe('finished');
    expect(row?.stopReason).toBe('checks_passed');
    expect(row?.iterations.map((iteration) => iteration.status)).toEqual([
      'finished',
      'finished',
      'finished',
    ]);
  });

  test('listeners hear their own loop only, and only when it changed', () => {
    const book = new LoopBook();
    const one = vi.fn();
    const other = vi.fn();
    book.subscribe('loop_1', one);
    book.subscribe('loop_2', other);
    book.onEvents([{ type: 'loop.started', loop: wireLoop() }]);
    expect(one).toHaveBeenCalledTimes(1);
    expect(other).not.toHaveBeenCalled();
    book.take([loopRow(wireLoop())]);
    expect(one).toHaveBeenCalledTimes(1);
    book.onEvents([{ type: 'turn.started' }, { type: 'loop.started', loop: { loopId: 'x' } }]);
    expect(one).toHaveBeenCalledTimes(1);
  });

  test('loopOfEvent reads the three events and passes over the rest', () => {
    expect(loopOfEvent({ type: 'loop.started', loop: wireLoop() })?.kind).toBe('record');
    expect(
      loopOfEvent({ type: 'loop.iteration', loopId: 'loop_1', iteration: wireIteration(1) }),
    ).toMatchObject({ kind: 'iteration', loopId: 'loop_1' });
    expect(loopOfEvent({ type: 'loop.iteration', loopId: '', iteration: {} })).toBeUndefined();
    expect(loopOfEvent({ type: 'goal.updated' })).toBeUndefined();
    expect(loopOfEvent(null)).toBeUndefined();
  });

  test('laterLoop keeps the further state with every iteration either knows', () => {
    const early = loopRow(wireLoop({ iterations: [wireIteration(1)] }));
    const later = loopRow(wireLoop({ iterations: [runningIteration(1), runningIteration(2)] }));
    const merged = laterLoop(early, later);
    expect(merged.iterations.map((row) => row.status)).toEqual(['finished', 'running']);
    const other = loopRow(wireLoop({ loopId: 'loop_2' }));
    expect(laterLoop(early, other)).toBe(other);
  });
});

describe('the loop card models', () => {
  test('loop_start: the prompt on the row, the record once started', () => {
    const running = loopStartModel(inputAt(madeCall('c1', 'loop_start', START_ARGS), 'start'));
    expect(running).toMatchObject({ kind: 'loopStart', state: 'running' });
    const ended = loopStartModel(
      inputAt(madeCall('c1', 'loop_start', START_ARGS, { output: { loop: wireLoop() } })),
    );
    expect(ended.kind).toBe('loopStart');
    if (ended.kind !== 'loopStart') return;
    expect(ended.summary).toBe(START_ARGS.prompt);
    expect(ended.loop?.loopId).toBe('loop_1');
  });

  test('loop_start: a record of another prompt, or another shape, is the generic card', () => {
    const other = loopStartModel(
      inputAt(
        madeCall('c1', 'loop_start', START_ARGS, {
          output: { loop: wireLoop({ prompt: 'something else' }) },
        }),
      ),
    );
    expect(other.kind).toBe('generic');
    const shapeless = loopStartModel(
      inputAt(madeCall('c1', 'loop_start', START_ARGS, { output: { loop: 3 } })),
    );
    expect(shapeless.kind).toBe('generic');
    const noLimit = loopStartModel(inputAt(madeCall('c1', 'loop_start', { prompt: 'x' }), 'start'));
    expect(noLimit.kind).toBe('generic');
  });

  test('loop_start: a failed call keeps its plain input and error', () => {
    const failed = loopStartModel(
      inputAt(
        madeCall('c1', 'loop_start', START_ARGS, {
          status: 'error',
          text: 'unknown check `tset`',
        }),
      ),
    );
    expect(failed).toMatchObject({ kind: 'loopStart', state: 'error' });
    if (failed.kind !== 'loopStart') return;
    expect(failed.body?.output).toBe('unknown check `tset`');
  });

  test('loop_status and loop_stop read their records; another loop is the generic card', () => {
    const status = loopStatusModel(
      inputAt(madeCall('c2', 'loop_status', {}, { output: { loops: [wireLoop()] } })),
    );
    expect(status.kind === 'loopStatus' && status.loops?.length).toBe(1);
    const wrong = loopStatusModel(
      inputAt(madeCall('c2', 'loop_status', { id: 'loop_9' }, { output: { loops: [wireLoop()] } })),
    );
    expect(wrong.kind).toBe('generic');
    const stopped = loopStopModel(
      inputAt(
        madeCall(
          'c3',
          'loop_stop',
          { id: 'loop_1' },
          {
            output: {
              loop: wireLoop({
                status: 'finished',
                stopReason: 'stopped',
                iterations: [wireIteration(1, { status: 'interrupted' })],
              }),
            },
          },
        ),
      ),
    );
    expect(stopped.kind === 'loopStop' && stopped.loop?.stopReason).toBe('stopped');
    const another = loopStopModel(
      inputAt(madeCall('c3', 'loop_stop', { id: 'loop_2' }, { output: { loop: wireLoop() } })),
    );
    expect(another.kind).toBe('generic');
  });
});
