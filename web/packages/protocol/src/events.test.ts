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
    log.events.forEach((event) => expect(event.time).toMatch(/^\d{4}-\d{2}-\d{2}T.*Z$/));
    expect(log.events[0]?.type).toBe('session.started');
  });

  test('reads every v2 event type with its fields, and reads a written event back the same', () => {
    const lines = [
      {
        seq: 1,
        time: '2026-11-30T17:05:16.123Z',
        type: 'turn.started',
        turnId: 't',
        prompt: 'Go.',
        clientTurnId: 'c-1',
      },
      {
        seq: 2,
        time: '2026-11-30T17:05:16.200Z',
        type: 'step.reasoning.delta',
        turnId: 't',
        step: 1,
        text: 'Hmm.',
      },
      {
        seq: 3,
        time: '2026-11-30T17:05:16.300Z',
        type: 'step.reasoning.end',
        turnId: 't',
        step: 1,
        signature: 'sig',
      },
      {
        seq: 4,
        time: '2026-11-30T17:05:16.400Z',
        type: 'request.opened',
        requestId: 'r',
        callId: 'c',
        parentCallId: 'p',
        toolName: 'question',
        ask: {
          kind: 'question',
          questions: [{ id: 'q', question: 'Which?', options: ['a', 'b'], multi_select: true }],
        },
      },
      {
        seq: 5,
        time: '2026-11-30T17:05:16.500Z',
        type: 'request.resolved',
        requestId: 'r',
        callId: 'c',
        resolution: { outcome: 'denied', reason: 'not now' },
        resolvedBy: 'terminal',
      },
      {
        seq: 6,
        time: '2026-11-30T17:05:16.600Z',
        type: 'turn.finished',
        turnId: 't',
        reason: 'refused',
      },
    ];
    const log = readEventLog(lines.map((line) => JSON.stringify(line)).join('\n'));
    expect(log.problems).toEqual([]);
    expect(log.events).toEqual(lines);
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
      {
        line: 12,
        seq: 9,
        message: '`request.opened` event: `ask.reason` should be a string, got nothing',
      },
      {
        line: 13,
        seq: 10,
        message:
          '`request.opened` event: `ask.questions[1].options[1]` should be a string, got a number',
      },
      {
        line: 14,
        seq: 11,
        message:
          '`request.resolved` event: `resolution.answers[0].answer` should be an array, got the string "x"',
      },
      {
        line: 15,
        seq: 12,
        message:
          '`step.reasoning.delta` event: `time` should be an RFC 3339 time such as "2026-11-30T17:05:16.123Z", got the string "yesterday"',
      },
      {
        line: 16,
        seq: 13,
        message: '`session.started` event: `agent` should be an object, got the string "coder"',
      },
    ]);
    expect(log.events.map((event) => event.seq)).toEqual([1, 5, 6, 14]);
    // An event written before protocol v2 has no time; one that has it keeps it.
    expect(log.events[0]?.time).toBe('');
    expect(log.events[3]).toMatchObject({
      time: '2026-11-30T10:00:09.250Z',
      stopReason: 'max_tokens',
    });
  });

  test('skips event types it does not know and ignores unknown fields', () => {
    const log = readEventLog(fixtureText('malformed/unknown-fields.jsonl'));
    expect(log.problems).toEqual([]);
    expect(log.skipped).toBe(3);
    const start = log.events.find((event) => event.type === 'tool.start');
    expect(start).toMatchObject({ presentation: { action: 'Read', remark: 'README.md' } });
    expect(start?.presentation).not.toHaveProperty('icon');
    expect(log.events[0]).toEqual({
      seq: 1,
      time: '2026-11-30T10:00:00Z',
      type: 'session.started',
      sessionId: 'sess-1',
      protocolVersion: 3,
      agent: { name: 'coder' },
      model: 'scripted:demo',
      workspace: '/home/qilin/workspace',
    });
    // A request kind and an outcome this client does not know are kept as written.
    const opened = log.events.find((event) => event.type === 'request.opened');
    expect(opened).toMatchObject({ ask: { kind: 'sign_off', reason: 'a newer kind of request' } });
    const resolved = log.events.find((event) => event.type === 'request.resolved');
    expect(resolved).toMatchObject({ resolution: { outcome: 'signed' }, resolvedBy: 'web-1' });
    expect(resolved).not.toHaveProperty('channel');
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
    { type: 'request.opened', seq: 1, requestId: 'r', callId: 'c', toolName: 't', ask: [] },
    { type: 'request.resolved', seq: 1, requestId: 'r', callId: 'c', resolution: null },
    { type: 'session.started', seq: 1, agent: {} },
    { type: 'step.finished', seq: 1, time: 5 },
    { type: 'tool.progress', seq: 1, time: '', callId: 'c', text: 'y', omittedBytes: 'many' },
  ]) {
    expect(readEvent(value).kind).toBe('invalid');
  }
  expect(readEvent({ seq: 1, type: 'future.event' })).toEqual({
    kind: 'unknown',
    type: 'future.event',
  });
  expect(malformedFixtures().length).toBe(5);
});

test('a progress event keeps the bytes left out before its text', () => {
  const read = readEvent({
    seq: 4,
    time: '2026-11-30T17:05:16.123Z',
    type: 'tool.progress',
    callId: 'c1',
    omittedBytes: 4096,
    text: 'latest\n',
  });
  expect(read).toEqual({
    kind: 'event',
    event: {
      seq: 4,
      time: '2026-11-30T17:05:16.123Z',
      type: 'tool.progress',
      callId: 'c1',
      omittedBytes: 4096,
      text: 'latest\n',
    },
  });
});
