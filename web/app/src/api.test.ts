// The page's API client for allowing a refused call: the route, the body, and the server's
// refusal kept as the error the card shows.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { api, ServerError } from './api';

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('api.allowCall', () => {
  it("posts a retry to the call's allow route and answers the grant", async () => {
    const grant = {
      id: 'grant-1',
      callId: 'call 1',
      toolName: 'bash',
      arguments: { command: 'git push' },
      grantedAt: '2026-11-30T17:05:16.123Z',
    };
    const fetch = vi.fn(async () => new Response(JSON.stringify(grant), { status: 201 }));
    vi.stubGlobal('fetch', fetch);
    await expect(api.allowCall('ses/1', 'call 1')).resolves.toEqual(grant);
    expect(fetch).toHaveBeenCalledWith('/api/sessions/ses%2F1/reviews/call%201/allow', {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json' },
      body: '{"retry":true}',
    });
  });

  it("rejects with the server's own message when the call was not refused by the reviewer", async () => {
    const body = {
      code: 'conflict',
      message: 'the call call_1 was not refused by the reviewer model',
    };
    vi.stubGlobal(
      'fetch',
      vi.fn(async () => new Response(JSON.stringify(body), { status: 409 })),
    );
    const refusal = api.allowCall('ses_1', 'call_1');
    await expect(refusal).rejects.toBeInstanceOf(ServerError);
    await expect(refusal).rejects.toMatchObject({ status: 409, message: body.message });
  });
});
