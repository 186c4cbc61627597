// The page's reading of the server's list of loops.
import { describe, expect, test } from 'vitest';
import { runningIteration, wireIteration, wireLoop } from '../../test-support/loops';
import { readLoops } from './loops';

describe('readLoops', () => {
  test('reads each record, leaving out one of another shape', () => {
    const loops = readLoops([
      wireLoop({ iterations: [wireIteration(1), runningIteration(2)] }),
      { loopId: 'loop_2', status: 'spinning' },
      wireLoop({ loopId: 'loop_3', status: 'finished', stopReason: 'stalled' }),
    ]);
    expect(loops.map((loop) => [loop.loopId, loop.status, loop.iterations.length])).toEqual([
      ['loop_1', 'running', 2],
      ['loop_3', 'finished', 0],
    ]);
  });

  test('an answer that is not a list is no loops', () => {
    expect(readLoops({ loops: [] })).toEqual([]);
    expect(readLoops(null)).toEqual([]);
  });
});
