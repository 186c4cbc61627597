// The session query cards' models, on calls built here with the recorded output types of
// `session_search`, `session_events` and `session_trajectory` (generated from qilin-protocol).
import type {
  SearchHit,
  SessionEventsOutput,
  SessionSearchOutput,
  SessionTrajectoryOutput,
  TrajectoryNode,
} from '@qilin-agent/protocol';
import { describe, expect, test } from 'vitest';
import type { CardInput } from './common';
import { sessionEventsModel } from './sessionEvents';
import { formatDuration, formatTime, parsePlace, sessionHref, snippetParts } from './sessionLink';
import { hitRow, sessionSearchModel } from './sessionSearch';
import { nestByDepth, sessionTrajectoryModel, type TrajectoryRow } from './sessionTrajectory';

/** A call of `toolName` that ended with `status` and recorded `output`. */
function ended(
  toolName: string,
  args: unknown,
  output: unknown,
  status: 'ok' | 'error' = 'ok',
): CardInput {
  return {
    toolName,
    phase: 'result',
    arguments: args,
    result: {
      status,
      content: [{ type: 'text', text: status === 'ok' ? 'recorded text' : 'no such session' }],
      ...(status === 'ok' ? { output } : {}),
      durationMs: 4,
    },
  };
}

const HIT = {
  session: 's-42',
  title: 'Retry logic',
  seq: 123,
  turn: 3,
  callId: 'call_7',
  tool: 'edit',
  field: 'arguments',
  snippet: '… change the «retry» «backoff» to 5 s …',
  time: '2026-12-02T05:00:00Z',
  score: 1.25,
} satisfies SearchHit;

describe('snippets', () => {
  test('each «match» is highlighted, the text around it is kept as it is', () => {
    expect(snippetParts('… change the «retry» «backoff» to 5 s …')).toEqual([
      { text: '… change the ', match: false },
      { text: 'retry', match: true },
      { text: ' ', match: false },
      { text: 'backoff', match: true },
      { text: ' to 5 s …', match: false },
    ]);
  });

  test('an unpaired mark is text, an empty match shows nothing', () => {
    expect(snippetParts('a « b » c «» «d')).toEqual([
      { text: 'a ', match: false },
      { text: ' b ', match: true },
      { text: ' c  «d', match: false },
    ]);
    expect(snippetParts('only » and «')).toEqual([{ text: 'only » and «', match: false }]);
    expect(snippetParts('重试«逻辑»')).toEqual([
      { text: '重试', match: false },
      { text: '逻辑', match: true },
    ]);
  });
});

describe('places in a session', () => {
  test('a call opens at its card, any other event at its seq', () => {
    expect(sessionHref('s 1/2', { kind: 'call', callId: 'call_7' })).toBe(
      '/sessions/s%201%2F2?at=call:call_7',
    );
    expect(sessionHref('s1', { kind: 'seq', seq: 5 })).toBe('/sessions/s1?at=seq:5');
    expect(sessionHref('s1')).toBe('/sessions/s1');
  });

  test('the at parameter reads back what it was written from, and nothing else', () => {
    for (const place of [
      { kind: 'call', callId: 'call_1.2' },
      { kind: 'seq', seq: 57 },
    ] as const) {
      const href = sessionHref('s1', place);
      expect(parsePlace(new URL(href, 'http://x').searchParams.get('at'))).toEqual(place);
    }
    for (const bad of [
      null,
      undefined,
      '',
      'call:',
      'seq:0',
      'seq:-3',
      'seq:1.5',
      'turn:2',
      'seq:99999999999999999',
    ]) {
      expect(parsePlace(bad), String(bad)).toBeUndefined();
    }
  });
});

describe('times and durations', () => {
  test('a time shows in the viewer’s time zone, named', () => {
    const at = '2026-12-02T05:00:00Z';
    expect(formatTime(at, 'en', 'Asia/Shanghai')).toBe('Dec 2, 2026, 01:00:00 PM GMT+8');
    expect(formatTime(at, 'en', 'UTC')).toBe('Dec 2, 2026, 05:00:00 AM UTC');
    expect(formatTime(at, 'zh-CN', 'Asia/Shanghai')).toContain('13:00:00');
    expect(formatTime('yesterday', 'en')).toBe('yesterday');
  });

  test('durations in the viewer’s words', () => {
    expect(formatDuration(850, 'en')).toBe('850 ms');
    expect(formatDuration(1234, 'en')).toBe('1.2 sec');
    expect(formatDuration(125_000, 'en')).toBe('2 min 5 sec');
    expect(formatDuration(119_700, 'en')).toBe('2 min');
    expect(formatDuration(1234, 'zh-CN')).toBe('1.2秒');
  });
});

describe('session_search', () => {
  test('hits with title, highlighted snippet, tool, time and a link to the card', () => {
    const model = sessionSearchModel(
      ended('session_search', { query: 'retry backoff' }, {
        query: 'retry backoff',
        hits: [
          HIT,
          {
            ...HIT,
            title: '',
            seq: 9,
            turn: null,
            callId: null,
            tool: null,
            field: 'prompt',
            snippet: 'fix the «retry»',
          },
        ],
        truncated: true,
      } satisfies SessionSearchOutput),
    );
    expect(model).toMatchObject({
      kind: 'sessionSearch',
      state: 'ok',
      summary: 'retry backoff',
      suffix: { key: 'sessions.hitsMore', values: { count: 2 } },
      truncated: true,
    });
    if (model.kind !== 'sessionSearch') throw new Error('generic');
    expect(model.hits?.[0]).toMatchObject({
      session: 's-42',
      title: 'Retry logic',
      tool: 'edit',
      field: 'arguments',
      time: '2026-12-02T05:00:00Z',
      href: '/sessions/s-42?at=call:call_7',
    });
    expect(model.hits?.[0]?.snippet.filter((part) => part.match).map((part) => part.text)).toEqual([
      'retry',
      'backoff',
    ]);
    // Not in a call: the link opens the session at the event.
    expect(model.hits?.[1]).toMatchObject({ seq: 9, href: '/sessions/s-42?at=seq:9' });
    expect(model.hits?.[1]).not.toHaveProperty('title');
    expect(model.hits?.[1]).not.toHaveProperty('callId');
  });

  test('no hits is a card of its own; every hit counted when none was left out', () => {
    const none = sessionSearchModel(
      ended(
        'session_search',
        { query: 'nothing' },
        { query: 'nothing', hits: [], truncated: false },
      ),
    );
    expect(none).toMatchObject({
      kind: 'sessionSearch',
      hits: [],
      suffix: { key: 'sessions.hits', values: { count: 0 } },
    });
  });

  test('while running, the query; a failed search, its plain card', () => {
    const running = sessionSearchModel({
      toolName: 'session_search',
      phase: 'start',
      arguments: { query: 'q' },
    });
    expect(running).toEqual({ kind: 'sessionSearch', state: 'running', summary: 'q' });
    const failed = sessionSearchModel(ended('session_search', { query: 'q' }, undefined, 'error'));
    expect(failed).toMatchObject({
      kind: 'sessionSearch',
      state: 'error',
      body: { kind: 'plain', output: 'no such session' },
    });
    expect(sessionSearchModel({ toolName: 'session_search', phase: 'preparing' })).toEqual({
      kind: 'sessionSearch',
      state: 'preparing',
    });
  });

  test('a result that is not the shape falls back to the generic card', () => {
    const shapes: unknown[] = [
      undefined,
      { query: 'q', hits: 'none', truncated: false },
      { query: 'q', hits: [{ ...HIT, seq: -1 }], truncated: false },
      { query: 'q', hits: [{ ...HIT, field: 'everywhere' }], truncated: false },
      { query: 'q', hits: [{ ...HIT, score: '1' }], truncated: false },
      { query: 'q', hits: [{ ...HIT, snippet: undefined }], truncated: false },
      { query: 'q', hits: [HIT] },
    ];
    for (const output of shapes) {
      expect(
        sessionSearchModel(ended('session_search', { query: 'q' }, output)).kind,
        JSON.stringify(output),
      ).toBe('generic');
    }
    expect(
      sessionSearchModel(
        ended('session_search', { q: 'q' }, { query: 'q', hits: [], truncated: false }),
      ).kind,
    ).toBe('generic');
  });

  test('a hit names what is wrong with it', () => {
    expect(() => hitRow({ ...HIT, session: 4 }, 'hits[0]')).toThrow(
      'hits[0].session is not a string',
    );
  });
});

describe('session_events', () => {
  const EVENTS = {
    session: 's-42',
    title: 'Retry logic',
    events: [
      {
        seq: 5,
        time: '2026-12-02T05:00:00Z',
        type: 'turn.started',
        turn: 1,
        callId: null,
        text: 'prompt: fix the retry',
      },
      {
        seq: 6,
        time: '2026-12-02T05:00:01Z',
        type: 'tool.start',
        turn: 1,
        callId: 'call_1',
        text: 'edit src/retry.rs',
      },
    ],
    next: 57,
  } satisfies SessionEventsOutput;

  test('a compact list, each event a link to its place, and where the page stands', () => {
    const model = sessionEventsModel(
      ended('session_events', { session: 's-42', after: 4 }, EVENTS),
    );
    expect(model).toMatchObject({
      kind: 'sessionEvents',
      summary: 'Retry logic',
      suffix: { key: 'sessions.events.count', values: { count: 2 } },
      paging: [
        { key: 'sessions.events.range', values: { first: 5, last: 6 } },
        { key: 'sessions.events.next', values: { next: 57 } },
      ],
    });
    if (model.kind !== 'sessionEvents') throw new Error('generic');
    expect(model.events?.map((event) => event.href)).toEqual([
      '/sessions/s-42?at=seq:5',
      '/sessions/s-42?at=call:call_1',
    ]);
    expect(model.events?.[1]).toMatchObject({
      type: 'tool.start',
      turn: 1,
      text: 'edit src/retry.rs',
    });
  });

  test('the last page, an empty page, an untitled session', () => {
    const last = sessionEventsModel(
      ended('session_events', { session: 's-42' }, { ...EVENTS, next: null, title: '' }),
    );
    expect(last).toMatchObject({
      summary: 's-42',
      paging: [{ key: 'sessions.events.range' }, { key: 'sessions.events.end' }],
    });
    const empty = sessionEventsModel(
      ended(
        'session_events',
        { session: 's-42', after: 90 },
        { ...EVENTS, events: [], next: null },
      ),
    );
    expect(empty).toMatchObject({
      events: [],
      paging: [
        { key: 'sessions.events.noneAfter', values: { after: 90 } },
        { key: 'sessions.events.end' },
      ],
    });
  });

  test('a result that is not the shape falls back to the generic card', () => {
    for (const output of [
      { ...EVENTS, events: [{ ...EVENTS.events[0], seq: 'five' }] },
      { ...EVENTS, events: [{ ...EVENTS.events[0], text: undefined }] },
      { ...EVENTS, next: 'later' },
      { ...EVENTS, session: undefined },
    ]) {
      expect(sessionEventsModel(ended('session_events', { session: 's-42' }, output)).kind).toBe(
        'generic',
      );
    }
  });
});

describe('session_trajectory', () => {
  const node = (
    depth: number,
    kind: TrajectoryNode['kind'],
    extra: Partial<TrajectoryNode> = {},
  ): TrajectoryNode => ({
    depth,
    kind,
    turn: 2,
    callId: null,
    tool: null,
    status: null,
    summary: `${kind} at ${depth}`,
    startedAt: null,
    durationMs: null,
    ...extra,
  });
  const TREE = {
    session: 's-42',
    title: 'Retry logic',
    turn: 2,
    call: null,
    nodes: [
      node(0, 'turn', { status: 'ok', startedAt: '2026-12-02T05:00:00Z', durationMs: 4100 }),
      node(1, 'text'),
      node(1, 'call', { callId: 'call_1', tool: 'run_code', status: 'error', durationMs: 3000 }),
      node(2, 'call', { callId: 'call_1.1', tool: 'read', status: 'ok', durationMs: 3 }),
      node(2, 'call', { callId: 'call_1.2', tool: 'bash', status: 'interrupted' }),
      node(3, 'request', { callId: 'call_1.2' }),
      node(1, 'call', { callId: 'call_2', tool: 'grep', status: 'running' }),
    ],
    truncated: false,
    spill: null,
  } satisfies SessionTrajectoryOutput;

  /** The tree as `depth:label` lines, indented by nesting: what the card shows. */
  function outline(rows: readonly TrajectoryRow[], level = 0): string[] {
    return rows.flatMap((row) => [
      `${'  '.repeat(level)}${row.depth}:${row.tool ?? row.kind}${row.status === undefined ? '' : `(${row.status})`}`,
      ...outline(row.children, level + 1),
    ]);
  }

  test('each descendant under its parent, nested code-mode calls included, with statuses', () => {
    const model = sessionTrajectoryModel(
      ended('session_trajectory', { session: 's-42', turn: 2 }, TREE),
    );
    if (model.kind !== 'sessionTrajectory') throw new Error('generic');
    expect(outline(model.roots ?? [])).toEqual([
      '0:turn(ok)',
      '  1:text',
      '  1:run_code(error)',
      '    2:read(ok)',
      '    2:bash(interrupted)',
      '      3:request',
      '  1:grep(running)',
    ]);
    expect(model).toMatchObject({
      summary: 'Retry logic',
      suffix: { key: 'sessions.trajectory.nodes', values: { count: 7 } },
      scope: { key: 'sessions.trajectory.turn', values: { turn: 2 } },
    });
    expect(model).not.toHaveProperty('cut');
    const turn = model.roots?.[0];
    expect(turn).toMatchObject({ startedAt: '2026-12-02T05:00:00Z', durationMs: 4100 });
    expect(turn).not.toHaveProperty('href');
    expect(turn?.children[1]).toMatchObject({
      href: '/sessions/s-42?at=call:call_1',
      durationMs: 3000,
    });
  });

  test('a call’s trajectory starts at its depth; a cut tree says where the whole text went', () => {
    const model = sessionTrajectoryModel(
      ended(
        'session_trajectory',
        { session: 's-42', call: 'call_1' },
        {
          ...TREE,
          turn: null,
          call: 'call_1',
          nodes: TREE.nodes.slice(2, 6),
          truncated: true,
          spill: '/tmp/qilin/trajectory.txt',
        },
      ),
    );
    if (model.kind !== 'sessionTrajectory') throw new Error('generic');
    expect(outline(model.roots ?? [])).toEqual([
      '1:run_code(error)',
      '  2:read(ok)',
      '  2:bash(interrupted)',
      '    3:request',
    ]);
    expect(model.scope).toEqual({ key: 'sessions.trajectory.call', values: { call: 'call_1' } });
    expect(model.cut).toEqual({ spill: '/tmp/qilin/trajectory.txt' });
    const whole = sessionTrajectoryModel(
      ended('session_trajectory', { session: 's-42' }, { ...TREE, turn: null, truncated: true }),
    );
    expect(whole).toMatchObject({ scope: { key: 'sessions.trajectory.session' }, cut: {} });
  });

  test('a node deeper than one under the node before it has no parent: the generic card', () => {
    expect(() =>
      nestByDepth([
        { depth: 0, kind: 'turn', summary: 'a' },
        { depth: 2, kind: 'call', summary: 'b' },
      ]),
    ).toThrow('output.nodes[1].depth is 2');
    const jumped = { ...TREE, nodes: [node(0, 'turn'), node(2, 'call')] };
    expect(
      sessionTrajectoryModel(ended('session_trajectory', { session: 's-42' }, jumped)).kind,
    ).toBe('generic');
    for (const nodes of [
      [{ ...node(0, 'turn'), status: 'finished' }],
      [{ ...node(0, 'turn'), kind: 'step' }],
      [node(-1, 'turn')],
      [node(0, 'turn', { durationMs: 1.5 })],
    ]) {
      expect(
        sessionTrajectoryModel(ended('session_trajectory', { session: 's-42' }, { ...TREE, nodes }))
          .kind,
      ).toBe('generic');
    }
  });

  test('an empty trajectory is a card with no nodes', () => {
    const model = sessionTrajectoryModel(
      ended('session_trajectory', { session: 's-42' }, { ...TREE, nodes: [] }),
    );
    expect(model).toMatchObject({
      kind: 'sessionTrajectory',
      roots: [],
      suffix: { values: { count: 0 } },
    });
  });
});
