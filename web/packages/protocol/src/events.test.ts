import { describe, expect, test } from 'vitest';
import { fixtureText, malformedFixtures, recordedFixtures } from '../../../test-support/fixtures';
import { readEvent, readEventLog } from './events';

describe('readEventLog', () => {
  test.each(recordedFixtures())('reads every event of the recorded log %s', (name) => {
    const log = readEventLog(fixtureText(`${name}.jsonl`));
    expect(log.problems).toEqual([]);
    expect(log.skipped).toBe(0);
    expect(log.events.length).toBeGreaterThan(3);
    log.events.forEach((event, index) => expect(event.seq).toBe(index + 1));
  });

  test('names each broken line and reads the rest', () => {
    const log = readEventLog(fixtureText('malformed/broken-lines.jsonl'));
    expect(log.problems).toEqual([
      { line: 2, message: expect.stringMatching(/^not JSON/) },
      { line: 3, seq: 2, message: '`tool.start` event: `callId` should be a string, got nothing' },
      { line: 4, message: 'a `tool.result` event needs a number `seq`, got nothing' },
      { line: 5, seq: 4, message: 'an event needs a string `type`, got nothing' },
      { line: 7, message: 'an event should be a JSON object, got an array' },
      {
        line: 10,
        seq: 7,
        message: '`step.text.delta` event: `text` should be a string, got a object',
      },
      { line: 11, message: expect.stringMatching(/^not JSON/) },
    ]);
    expect(log.events.map((event) => event.seq)).toEqual([1, 5, 6]);
  });

  test('skips event types it does not know and ignores unknown fields', () => {
    const log = readEventLog(fixtureText('malformed/unknown-fields.jsonl'));
    expect(log.problems).toEqual([]);
    expect(log.skipped).toBe(3);
    const start = log.events.find((event) => event.type === 'tool.start');
    expect(start).toMatchObject({ presentation: { action: 'Read', remark: 'README.md' } });
    expect(start?.presentation).not.toHaveProperty('icon');
  });

  test('keeps the arguments of a start as recorded, whatever JSON they are', () => {
    const log = readEventLog(fixtureText('malformed/non-json-arguments.jsonl'));
    const starts = log.events.filter((event) => event.type === 'tool.start');
    expect(starts.map((start) => start.arguments)).toEqual([
      '{"path": "src/lib.rs", "old_string": ',
      null,
      ['src/lib.rs'],
      { pattern: 42, path: ['src'] },
      { command: 'ls' },
      { todos: [{ id: 'a', content: 'One', status: 'someday' }] },
      { questions: [{ id: 'q', question: 'Which?' }] },
    ]);
    expect(log.problems).toEqual([
      {
        line: 11,
        seq: 11,
        message: '`tool.result` event: `durationMs` should be a number, got the string "soon"',
      },
    ]);
  });
});

test('readEvent never throws on odd values', () => {
  for (const value of [
    undefined,
    null,
    1,
    'x',
    [],
    {},
    { type: 1 },
    { type: 'tool.start', seq: 'x' },
  ]) {
    expect(readEvent(value).kind).toBe('invalid');
  }
  expect(readEvent({ seq: 1, type: 'future.event' })).toEqual({
    kind: 'unknown',
    type: 'future.event',
  });
  expect(malformedFixtures().length).toBe(5);
});
