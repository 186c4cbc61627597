import { expect, test } from '@playwright/test';
import { startStreamCutter, type StreamCutter } from './support/proxy';
import { startScriptedServer, type QilinServer } from './support/server';

const AGENT = `name: e2e-reconnect
description: Runs a slow turn while the page's event stream is cut.
instructions: Follow the script.
tools: [bash]
skills:
  available: []
limits:
  max_steps: 10
`;

const SAYS = [
  'Step one: counting the files in the workspace now.',
  'Step two: reading them again, slowly and carefully.',
  'Step three: checking the results once more before the end.',
  'All finished: every step ran once.',
];

// Slow enough that the stream is cut mid-turn, and the turn goes on while the page is away.
const SCRIPT = `chunk_delay_ms: 30
turns:
  - say: "${SAYS[0]}"
    calls:
      - tool: bash
        args: {command: "sleep 1; echo one"}
  - say: "${SAYS[1]}"
    calls:
      - tool: bash
        args: {command: "sleep 1; echo two"}
      - tool: bash
        args: {command: "echo three"}
  - say: "${SAYS[2]}"
    calls:
      - tool: bash
        args: {command: "sleep 1; echo four"}
  - say: "${SAYS[3]}"
`;

interface StoredEvent {
  readonly seq: number;
  readonly type: string;
  readonly callId?: string;
  readonly text?: string;
  readonly step?: number;
}

let server: QilinServer;
let cutter: StreamCutter;
let token: string;

test.beforeAll(async () => {
  server = await startScriptedServer(AGENT, SCRIPT);
  token = server.token;
  cutter = await startStreamCutter(server.origin);
});

test.afterAll(async () => {
  await cutter?.close();
  await server?.stop();
});

/** Asks the server itself (not through the proxy), with the token. */
async function serverGet<T>(path: string): Promise<T> {
  const answer = await fetch(`${server.origin}${path}`, {
    headers: { Authorization: `Bearer ${token}` },
  });
  expect(answer.ok, `GET ${path}: HTTP ${answer.status}`).toBe(true);
  return (await answer.json()) as T;
}

test('the event stream dropped mid-turn, the server up: reconnecting, then every event once', async ({
  page,
}) => {
  const shown = new URL(server.url);
  await page.goto(`${cutter.origin}${shown.pathname}${shown.hash}`);
  await page.getByRole('button', { name: 'New session' }).click();
  await expect(page).toHaveURL(/\/sessions\//);
  const sessionId = decodeURIComponent(new URL(page.url()).pathname.split('/').pop() ?? '');
  const prompt = page.getByRole('textbox', { name: 'Prompt' });
  await prompt.fill('Count, read and check.');
  await prompt.press('Enter');

  // Mid-turn: the first call runs; the network drops the page's stream.
  await expect(
    page.locator('[data-chat-call-id="call_1"] .qt-card[data-state="running"]'),
  ).toBeVisible();
  const before = cutter.streamsOpened;
  cutter.cut();
  await expect(page.getByRole('status').filter({ hasText: 'Reconnecting…' })).toBeVisible();

  // The turn goes on without the page, to its end.
  await expect
    .poll(async () => (await serverGet<{ status: string }>(`/api/sessions/${sessionId}`)).status, {
      timeout: 60_000,
    })
    .toBe('idle');
  await expect(page.getByText('Reconnecting…')).toBeVisible();
  cutter.resume();

  // Back: the page resumes after the last event it had, and shows the end of the turn.
  await expect(page.getByText('Turn completed')).toHaveCount(1, { timeout: 30_000 });
  await expect(page.locator('[data-stream]')).toHaveAttribute('data-stream', 'live');
  expect(cutter.streamsOpened).toBeGreaterThan(before);

  const { events } = await serverGet<{ events: StoredEvent[] }>(
    `/api/sessions/${sessionId}/events?limit=1000`,
  );
  const started = events.filter((event) => event.type === 'tool.start').map((e) => e.callId);
  expect(started.length).toBe(4);
  // Every call once, none left running, as many as the server ran.
  const shownCalls = await page
    .locator('[data-chat-call-id]')
    .evaluateAll((nodes) => nodes.map((node) => (node as HTMLElement).dataset.chatCallId));
  expect(shownCalls).toEqual(started);
  await expect(page.locator('[data-chat-call-id] .qt-card[data-state="ok"]')).toHaveCount(4);
  await expect(page.locator('[data-state="running"], [data-state="preparing"]')).toHaveCount(0);
  // Every step's text once: what the page shows is exactly what the server streamed.
  const streamed = new Map<number, string>();
  for (const event of events) {
    if (event.type === 'step.text.delta' && event.step !== undefined) {
      streamed.set(event.step, (streamed.get(event.step) ?? '') + (event.text ?? ''));
    }
  }
  expect([...streamed.values()]).toEqual(SAYS);
  const texts = await page.locator('.qp-markdown').allTextContents();
  expect(texts.map((text) => text.trim())).toEqual(SAYS);
});
