import { foldEvents, type RequestNode } from '@qilin-agent/protocol';
import { describe, expect, test } from 'vitest';
import { callOf, inputAt } from '../../../../test-support/calls';
import { untilRequest } from '../../../../test-support/fixtures';
import { callState } from './common';
import { questionModel } from './question';
import { requestNotes } from './request';
import { shellModel } from './shell';

/** When the hand-made requests below were opened. */
const OPENED = '2026-11-30T17:05:16.123Z';

/** A call of a log folded up to (and with) its first `request.opened`, and that request. */
function waitingCall(fixture: string, toolName: string) {
  const { events, opened } = untilRequest(fixture, toolName);
  const node = foldEvents(events).call(opened.callId);
  if (node === undefined) throw new Error('the waiting call is not in the tree');
  return { node, pending: node.requests[node.requests.length - 1] as RequestNode };
}

describe('the waiting state', () => {
  test('a dispatched call waiting on a request is waiting, never running', () => {
    const { node, pending } = waitingCall('review', 'bash');
    expect(node.phase).toBe('waiting');
    expect(callState({ ...inputAt(node, 'start'), pending })).toBe('waiting');
    expect(callState(inputAt(node, 'start'))).toBe('running');
    // A result settles the state whatever request was left open.
    expect(callState({ ...inputAt(callOf('review', 'call_3')), pending })).toBe('denied');
  });

  test('a waiting question card leaves the questions to the note; once answered it pairs them', () => {
    const { node, pending } = waitingCall('tasks', 'question');
    const waiting = questionModel({ ...inputAt(node, 'start'), pending });
    expect(waiting).toMatchObject({ kind: 'question', state: 'waiting', count: 3 });
    expect(waiting).not.toHaveProperty('rows');
    expect(questionModel(inputAt(node, 'start'))).toHaveProperty('rows');
  });

  test('a command waiting for approval has not run: no output, not even an empty one', () => {
    const { node, pending } = waitingCall('review', 'bash');
    const command = 'git push --dry-run origin main 2>&1 || true';
    expect(shellModel({ ...inputAt(node, 'start'), pending })).toMatchObject({
      state: 'waiting',
      body: { kind: 'terminal', command },
    });
    expect(shellModel({ ...inputAt(node, 'start'), pending })).not.toHaveProperty('body.output');
    expect(shellModel(inputAt(node, 'start'))).toMatchObject({ body: { command, output: '' } });
  });
});

describe('requestNotes', () => {
  test('an approval waits with the policy’s reason', () => {
    const { node, pending } = waitingCall('review', 'bash');
    expect(requestNotes(node.requests, pending)).toEqual([
      {
        requestId: 'req-1',
        waiting: true,
        headline: { key: 'request.waitingApproval' },
        reason: 'pushing publishes the work',
      },
    ]);
  });

  test('questions wait with every question, its options and whether several may be picked', () => {
    const { node, pending } = waitingCall('tasks', 'question');
    expect(requestNotes(node.requests, pending)).toEqual([
      {
        requestId: 'req-1',
        waiting: true,
        headline: { key: 'request.waitingAnswer' },
        questions: [
          {
            id: 'version',
            question: 'Which version are the notes for?',
            options: ['1.4.0', '2.0.0'],
            multiSelect: false,
          },
          { id: 'day', question: 'When should they be published?', multiSelect: false },
          {
            id: 'kinds',
            question: 'Which kinds of change should be listed?',
            options: ['features', 'fixes', 'internal'],
            multiSelect: true,
          },
        ],
      },
    ]);
  });

  test('an ended approval says how and by whom; an ended question says nothing', () => {
    expect(requestNotes(callOf('review', 'call_2').requests, undefined)).toEqual([
      {
        requestId: 'req-1',
        waiting: false,
        headline: { key: 'request.approved', values: { by: 'fixture' } },
        reason: 'pushing publishes the work',
      },
    ]);
    expect(requestNotes(callOf('review', 'call_3').requests, undefined)[0]?.headline).toEqual({
      key: 'request.denied',
      values: { by: 'fixture' },
    });
    // Cancelled by the runtime, dismissed, answered: the question card shows each itself.
    expect(requestNotes(callOf('interrupts', 'call_2').requests, undefined)).toEqual([]);
    expect(requestNotes(callOf('tasks', 'call_7').requests, undefined)).toEqual([]);
    expect(requestNotes(callOf('tasks', 'call_8').requests, undefined)).toEqual([]);
  });

  test('a denial’s words, a cancellation, an unknown kind and outcome, a request left open', () => {
    const approval = {
      kind: 'approval' as const,
      reason: 'deploys',
      presentation: { action: 'Run command', remark: 'make deploy' },
      arguments: { command: 'make deploy' },
    };
    const requests: RequestNode[] = [
      {
        requestId: 'a',
        openedAt: OPENED,
        ask: approval,
        resolution: { outcome: 'denied', reason: '  not on a Friday\n' },
        resolvedBy: 'web-1',
      },
      {
        requestId: 'b',
        openedAt: OPENED,
        ask: approval,
        resolution: { outcome: 'cancelled' },
        resolvedBy: 'runtime',
      },
      {
        requestId: 'c',
        openedAt: OPENED,
        ask: { kind: 'sign_off' } as unknown as RequestNode['ask'],
        resolution: { outcome: 'signed' } as unknown as RequestNode['resolution'],
        resolvedBy: 'lead',
      },
      { requestId: 'd', openedAt: OPENED, ask: approval },
      {
        requestId: 'e',
        openedAt: OPENED,
        ask: { kind: 'sign_off' } as unknown as RequestNode['ask'],
      },
    ];
    const notes = requestNotes(requests, requests[4]);
    expect(notes.map((note) => [note.requestId, note.waiting, note.headline])).toEqual([
      [
        'a',
        false,
        { key: 'request.deniedWithReason', values: { by: 'web-1', reason: 'not on a Friday' } },
      ],
      ['b', false, { key: 'request.cancelled' }],
      ['c', false, { key: 'request.ended', values: { outcome: 'signed' } }],
      ['e', true, { key: 'request.waiting' }],
    ]);
  });

  test('an approval given for the rest of the session names what it allows', () => {
    const ask = {
      kind: 'approval' as const,
      reason: 'pushing publishes the work',
      presentation: { action: 'Run command', remark: 'git push origin main' },
      arguments: { command: 'git push origin main' },
    };
    const requests: RequestNode[] = [
      {
        requestId: 'a',
        openedAt: OPENED,
        ask,
        resolution: {
          outcome: 'approved_for_session',
          grant: { tool: 'bash', commandPrefix: 'git push' },
        },
        resolvedBy: 'terminal',
      },
      {
        requestId: 'b',
        openedAt: OPENED,
        ask,
        resolution: { outcome: 'approved_for_session', grant: { tool: 'web_fetch' } },
        resolvedBy: 'web-1',
      },
    ];
    expect(requestNotes(requests, undefined).map((note) => note.headline)).toEqual([
      { key: 'request.approvedForSession', values: { by: 'terminal', what: 'git push' } },
      { key: 'request.approvedForSession', values: { by: 'web-1', what: 'web_fetch' } },
    ]);
  });
});
