import type { GoalRow } from '@qilin-agent/client-ui-tool';
import type { GoalRecord } from '@qilin-agent/protocol';
import { I18nProvider, type Locale } from '@qilin-agent/i18n';
import { act, fireEvent, render, renderHook, screen, waitFor } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { GoalBanner } from './GoalBanner';
import { goalOfEvent, laterGoal, readGoal, useSessionGoal } from './goal';

const RECORD: GoalRecord = {
  id: 'goal_1',
  objective: 'Make the upload retries pass their tests',
  status: 'active',
  budget: { tokens: 100_000, seconds: 600, turns: 10 },
  usage: { tokens: 25_000, seconds: 150, turns: 2 },
  checks: [],
  lastChecks: {
    runs: [
      {
        id: 'test',
        command: 'cargo test',
        status: 'completed',
        conclusion: 'failure',
        durationMs: 900,
        summary: '1 failed',
        annotations: [],
        omittedAnnotations: 0,
        output: '',
        cached: false,
        startedAt: '2026-03-01T10:00:00Z',
        exitCode: 101,
      },
    ],
    conclusion: 'failure',
    summary: '1 check: 1 failed',
  },
  createdAt: '2026-03-01T09:00:00Z',
  updatedAt: '2026-03-01T10:00:00Z',
};

function row(record: GoalRecord): GoalRow {
  const read = readGoal(record);
  if (read === undefined) throw new Error('the test record is not a goal');
  return read;
}

/** Answers every request with `answer`, recording what was asked. */
function serve(answer: (method: string, url: string, body: unknown) => Response) {
  const fetch = vi.fn(async (url: string, init?: RequestInit) =>
    answer(
      init?.method ?? 'GET',
      url,
      typeof init?.body === 'string' ? (JSON.parse(init.body) as unknown) : undefined,
    ),
  );
  vi.stubGlobal('fetch', fetch);
  return fetch;
}

function banner(goal: GoalRow, onChange = vi.fn(), locale: Locale = 'en') {
  const rendered = render(
    <I18nProvider locale={locale}>
      <GoalBanner sessionId="s1" goal={goal} onChange={onChange} />
    </I18nProvider>,
  );
  return { ...rendered, onChange };
}

describe('GoalBanner', () => {
  it('shows the objective, status, budget meters and the last checks', () => {
    banner(row(RECORD));
    const region = screen.getByRole('region', { name: 'Goal' });
    expect(region).toHaveTextContent('Make the upload retries pass their tests');
    expect(region).toHaveTextContent('active');
    expect(screen.getByRole('meter', { name: /Tokens: 25K of 100K, 75K left/ })).toBeVisible();
    expect(
      screen.getByRole('meter', { name: /Turns: 2 turns of 10 turns, 8 turns left/ }),
    ).toBeVisible();
    expect(region).toHaveTextContent('Last checks: ✕failed 1 check: 1 failed');
    expect(screen.getByRole('button', { name: 'Pause' })).toBeEnabled();
    expect(screen.queryByRole('button', { name: 'Resume' })).toBeNull();
    // An active goal's budget is raised once it is paused or spent (the server resumes those).
    expect(screen.queryByRole('button', { name: 'Raise budget' })).toBeNull();
  });

  it('pauses through the server and takes the answered state', async () => {
    const paused = {
      ...RECORD,
      status: 'paused',
      pausedBecause: 'user',
      updatedAt: '2026-03-01T10:05:00Z',
    } as const;
    const fetch = serve(() => Response.json(paused));
    const { onChange } = banner(row(RECORD));
    fireEvent.click(screen.getByRole('button', { name: 'Pause' }));
    await waitFor(() => expect(onChange).toHaveBeenCalled());
    expect(fetch).toHaveBeenCalledWith(
      '/api/sessions/s1/goal/pause',
      expect.objectContaining({ method: 'POST' }),
    );
    expect(onChange.mock.calls[0]?.[0]).toMatchObject({ status: 'paused', pausedBecause: 'user' });
  });

  it('a paused goal says why and resumes; clear deletes it', async () => {
    const paused = row({ ...RECORD, status: 'paused', pausedBecause: 'restart' });
    const fetch = serve((method) =>
      Response.json({
        ...RECORD,
        status: method === 'DELETE' ? 'cleared' : 'active',
        updatedAt: '2026-03-01T11:00:00Z',
      }),
    );
    const { onChange } = banner(paused);
    expect(screen.getByRole('region', { name: 'Goal' })).toHaveTextContent(
      'paused: the server restarted',
    );
    fireEvent.click(screen.getByRole('button', { name: 'Resume' }));
    await waitFor(() => expect(onChange).toHaveBeenCalledTimes(1));
    expect(fetch).toHaveBeenLastCalledWith(
      '/api/sessions/s1/goal/resume',
      expect.objectContaining({ method: 'POST', body: '{}' }),
    );
    fireEvent.click(screen.getByRole('button', { name: 'Clear' }));
    await waitFor(() => expect(onChange).toHaveBeenCalledTimes(2));
    expect(fetch).toHaveBeenLastCalledWith(
      '/api/sessions/s1/goal',
      expect.objectContaining({ method: 'DELETE' }),
    );
    expect(onChange.mock.calls[1]?.[0]).toMatchObject({ status: 'cleared' });
  });

  it('raises the budget with the form: new limits in tokens, seconds and turns', async () => {
    const limited = row({
      ...RECORD,
      status: 'budget_limited',
      usage: { tokens: 100_400, seconds: 300, turns: 4 },
    });
    const fetch = serve(() =>
      Response.json({ ...RECORD, budget: { tokens: 150_000, seconds: 1200, turns: 10 } }),
    );
    const { onChange } = banner(limited);
    fireEvent.click(screen.getByRole('button', { name: 'Raise budget' }));
    const tokens = screen.getByRole('textbox', { name: 'Tokens' });
    expect(tokens).toHaveValue('100000');
    fireEvent.change(tokens, { target: { value: 'many' } });
    expect(screen.getByRole('button', { name: 'Raise and resume' })).toBeDisabled();
    fireEvent.change(tokens, { target: { value: '150000' } });
    fireEvent.change(screen.getByRole('textbox', { name: 'Time (minutes)' }), {
      target: { value: '20' },
    });
    fireEvent.change(screen.getByRole('textbox', { name: 'Turns' }), { target: { value: '' } });
    fireEvent.click(screen.getByRole('button', { name: 'Raise and resume' }));
    await waitFor(() => expect(onChange).toHaveBeenCalled());
    const [, init] = fetch.mock.calls[0] ?? [];
    expect(JSON.parse(String(init?.body))).toEqual({ tokenBudget: 150_000, timeBudget: 1200 });
    expect(screen.queryByRole('form')).toBeNull();
  });

  it('says why the server refused, and shows nothing for a cleared goal', async () => {
    serve(() =>
      Response.json({ code: 'conflict', message: 'the goal is not paused' }, { status: 409 }),
    );
    banner(row({ ...RECORD, status: 'paused', pausedBecause: 'user' }), vi.fn(), 'zh-CN');
    fireEvent.click(screen.getByRole('button', { name: '继续' }));
    expect(await screen.findByRole('alert')).toHaveTextContent(
      '目标未改变：the goal is not paused',
    );
    const cleared = banner(row({ ...RECORD, status: 'cleared' }));
    expect(cleared.container).toBeEmptyDOMElement();
  });
});

describe('the goal as the page follows it', () => {
  it('reads goal events, skips others and goals of another shape', () => {
    expect(goalOfEvent({ type: 'goal.updated', goal: RECORD, by: 'user', reason: 'x' })?.id).toBe(
      'goal_1',
    );
    expect(
      goalOfEvent({ type: 'goal.created', goal: { ...RECORD, status: 'done' } }),
    ).toBeUndefined();
    expect(goalOfEvent({ type: 'turn.started', goal: RECORD })).toBeUndefined();
    expect(goalOfEvent('goal.updated')).toBeUndefined();
  });

  it('keeps the later state of the same goal; another goal replaces it', () => {
    const now = row(RECORD);
    const older = row({ ...RECORD, status: 'paused', updatedAt: '2026-03-01T09:30:00Z' });
    expect(laterGoal(now, older)).toBe(now);
    const other = row({ ...RECORD, id: 'goal_2', updatedAt: '2026-03-01T09:30:00Z' });
    expect(laterGoal(now, other)).toBe(other);
    expect(laterGoal(now, null)).toBeNull();
  });

  it('refreshes from the server, then follows the stream’s goal events', async () => {
    serve(() => Response.json({ goal: RECORD }));
    const { result } = renderHook(() => useSessionGoal('s1'));
    expect(result.current.goal).toBeUndefined();
    act(() => result.current.refresh());
    await waitFor(() => expect(result.current.goal?.status).toBe('active'));
    act(() =>
      result.current.onEvents([
        { type: 'turn.started' },
        {
          type: 'goal.updated',
          goal: {
            ...RECORD,
            status: 'paused',
            pausedBecause: 'stalled',
            updatedAt: '2026-03-01T10:30:00Z',
          },
          by: 'runtime',
          reason: 'three turns changed nothing',
        },
      ]),
    );
    expect(result.current.goal).toMatchObject({ status: 'paused', pausedBecause: 'stalled' });
  });

  it('a server without goals leaves the session with none', async () => {
    serve(() => Response.json({ code: 'not_found', message: 'no such route' }, { status: 404 }));
    const { result } = renderHook(() => useSessionGoal('s1'));
    act(() => result.current.refresh());
    await waitFor(() => expect(result.current.goal).toBeNull());
  });
});
