// The calls a person allowed, as the server lists them: read when asked, kept when the list
// cannot be read.
import type { AutoReviewRecord, ReviewList } from '@qilin-agent/protocol';
import { act, renderHook, waitFor } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { allowedCallsOf, useAllowedCalls } from './reviews';

const REVIEW: AutoReviewRecord = {
  reviewer: 'scripted:reviewer.yaml',
  verdict: 'deny',
  risk: 'high',
  userReason: 'pushing publishes the work',
  latencyMs: 2,
  inputTokens: 90,
  outputTokens: 20,
};

const LIST: ReviewList = {
  reviews: [
    {
      callId: 'call_3',
      toolName: 'bash',
      arguments: { command: 'git push' },
      review: REVIEW,
      at: '2026-11-30T17:06:00Z',
      granted: false,
    },
    {
      callId: 'call_1',
      toolName: 'bash',
      arguments: { command: 'git push' },
      review: REVIEW,
      at: '2026-11-30T17:05:00Z',
      granted: true,
    },
  ],
};

afterEach(() => {
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});

describe('the calls a person allowed', () => {
  it('are the listed reviews marked granted', () => {
    expect([...allowedCallsOf(LIST)]).toEqual(['call_1']);
    expect(allowedCallsOf({ reviews: [] }).size).toBe(0);
  });

  it('are read from the session\u2019s reviews route, and kept when it fails', async () => {
    const fetch = vi.fn(async () => new Response(JSON.stringify(LIST), { status: 200 }));
    vi.stubGlobal('fetch', fetch);
    const { result } = renderHook(() => useAllowedCalls('ses_1'));
    expect(result.current.allowed.size).toBe(0);
    act(() => result.current.refresh());
    await waitFor(() => expect(result.current.allowed.has('call_1')).toBe(true));
    expect(fetch).toHaveBeenCalledWith('/api/sessions/ses_1/reviews', expect.anything());
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    fetch.mockImplementation(
      async () => new Response('{"code":"not_found","message":"no session"}', { status: 404 }),
    );
    act(() => result.current.refresh());
    await waitFor(() => expect(warn).toHaveBeenCalled());
    expect(result.current.allowed.has('call_1')).toBe(true);
  });
});
