import AxeBuilder from '@axe-core/playwright';
import { expect, test, type Page, type Route } from '@playwright/test';
import { screenshot } from './support/screens';
import { callServer, recordTurn, startScriptedServer, type QilinServer } from './support/server';

// The page opens a session from the server's snapshot of its latest turns (20) and loads the
// earlier ones as the reader scrolls up.
const TURNS = 45;
const PAGE = 20;

const AGENT = `name: e2e-paging
description: Answers many short turns, for paging the transcript.
instructions: Follow the script.
tools: [read]
skills:
  available: []
limits:
  max_steps: 5
`;

// Each answer a few paragraphs, so that one page of turns is taller than the screen.
const answer = (turn: number) =>
  Array.from(
    { length: 4 },
    (_, paragraph) =>
      `Answer ${turn}, paragraph ${paragraph + 1}: the words go on for a while so that the turn takes up some room on the screen.`,
  ).join('\\n\\n');
const SCRIPT = `chunk_delay_ms: 0
turns:
${Array.from({ length: TURNS }, (_, turn) => `  - say: "${answer(turn)}"`).join('\n')}
`;

let server: QilinServer;
let sessionId: string;

test.beforeAll(async () => {
  server = await startScriptedServer(AGENT, SCRIPT);
  // A session of many turns, recorded before the page opens it.
  ({ id: sessionId } = await callServer<{ id: string }>(server, 'POST', '/api/sessions', {}));
  for (let turn = 0; turn < TURNS; turn += 1) {
    // Ended: the session holds the turn, and none runs.
    await recordTurn(
      server,
      sessionId,
      { prompt: `Prompt ${turn}`, clientTurnId: `paging-${turn}` },
      turn + 1,
    );
  }
});

test.afterAll(async () => {
  await server?.stop();
});

/** The prompts of the turns shown, in order. */
async function shownPrompts(page: Page): Promise<string[]> {
  return page
    .locator('[data-turn-id] .qc-prompt__text')
    .evaluateAll((nodes) => nodes.map((node) => node.textContent ?? ''));
}

/**
 * Checks that the turn of `prompt` is still at `top` on screen: now, and after the turns put
 * above it have had a few frames to take their real height.
 */
async function expectStill(page: Page, prompt: string, top: number): Promise<void> {
  expect(Math.abs((await topOf(page, prompt)) - top)).toBeLessThanOrEqual(1);
  await page.waitForTimeout(300);
  expect(Math.abs((await topOf(page, prompt)) - top)).toBeLessThanOrEqual(1);
}

/** Where the turn of `prompt` is on screen (its top, in CSS pixels). */
async function topOf(page: Page, prompt: string): Promise<number> {
  const box = await page.locator('[data-turn-id]', { hasText: prompt }).first().boundingBox();
  if (box === null) throw new Error(`the turn of ${prompt} is not shown`);
  return box.y;
}

test('a long session opens on its last page; scrolling up loads each earlier page once, in place', async ({
  page,
}) => {
  const earlierPages: string[] = [];
  let release: () => void = () => {};
  let held = new Promise<void>((resolve) => (release = resolve));
  // Each earlier page waits until the test has seen the turns before it arrives.
  await page.route(/\/snapshot\?.*before=/, async (route: Route) => {
    earlierPages.push(new URL(route.request().url()).searchParams.get('before') ?? '');
    await held;
    await route.continue();
  });

  const shown = new URL(server.url);
  await page.goto(`${server.origin}/sessions/${sessionId}${shown.hash}`);
  await expect(page.locator('[data-turn-id]')).toHaveCount(PAGE);
  expect(await shownPrompts(page)).toEqual(
    Array.from({ length: PAGE }, (_, at) => `Prompt ${TURNS - PAGE + at}`),
  );
  await expect(
    page.getByRole('button', { name: `Show earlier turns (${TURNS - PAGE})` }),
  ).toBeVisible();
  // The session's facts come from its first event, read beside the snapshot.
  await expect(page.getByText('scripted:script.yaml').first()).toBeVisible();
  await expect(page.locator('[data-stream]')).toHaveAttribute('data-stream', 'live');
  expect(earlierPages).toEqual([]);

  // Up to the top: the previous page starts loading by itself; the turn at the top stays put.
  const transcript = page.locator('.qc-transcript');
  await transcript.evaluate((element) => (element.scrollTop = 0));
  await expect(page.getByRole('button', { name: 'Loading earlier turns…' })).toBeVisible();
  await screenshot(page, 'earlier-turns-loading');
  const firstShown = `Prompt ${TURNS - PAGE}`;
  const before = await topOf(page, firstShown);
  release();
  await expect(page.locator('[data-turn-id]')).toHaveCount(2 * PAGE);
  await expectStill(page, firstShown, before);
  await expect(
    page.getByRole('button', { name: `Show earlier turns (${TURNS - 2 * PAGE})` }),
  ).toBeVisible();

  // Up again: the last page; then no control is left.
  held = new Promise<void>((resolve) => (release = resolve));
  await transcript.evaluate((element) => (element.scrollTop = 0));
  await expect(page.getByRole('button', { name: 'Loading earlier turns…' })).toBeVisible();
  const secondShown = `Prompt ${TURNS - 2 * PAGE}`;
  const again = await topOf(page, secondShown);
  release();
  await expect(page.locator('[data-turn-id]')).toHaveCount(TURNS);
  await expectStill(page, secondShown, again);
  await expect(page.getByRole('button', { name: /earlier turns/ })).toHaveCount(0);

  // Every turn once, in order; each earlier page asked for once.
  const prompts = await shownPrompts(page);
  expect(prompts).toEqual(Array.from({ length: TURNS }, (_, at) => `Prompt ${at}`));
  const ids = await page
    .locator('[data-turn-id]')
    .evaluateAll((nodes) => nodes.map((node) => (node as HTMLElement).dataset.turnId));
  expect(new Set(ids).size).toBe(TURNS);
  expect(earlierPages).toEqual([String(TURNS - PAGE), String(TURNS - 2 * PAGE)]);
});

test('the control loads a page from the keyboard, and a failed page says so and retries', async ({
  page,
}) => {
  let fail = true;
  await page.route(/\/snapshot\?.*before=/, async (route: Route) => {
    if (fail) {
      await route.fulfill({
        status: 503,
        contentType: 'application/json',
        body: JSON.stringify({ code: 'stopping', message: 'the server is stopping' }),
      });
      return;
    }
    await route.continue();
  });
  const shown = new URL(server.url);
  await page.goto(`${server.origin}/sessions/${sessionId}${shown.hash}`);
  await expect(page.locator('[data-turn-id]')).toHaveCount(PAGE);
  const control = page.getByRole('button', { name: `Show earlier turns (${TURNS - PAGE})` });
  await control.focus();
  await page.keyboard.press('Enter');
  await expect(
    page.getByRole('alert').filter({ hasText: 'Could not load the earlier turns' }),
  ).toBeVisible();
  // The error and its retry pass axe-core's checks.
  const results = await new AxeBuilder({ page }).include('.qc-earlier').analyze();
  expect(results.violations.map((v) => `${v.id}: ${v.help}`)).toEqual([]);
  await screenshot(page, 'earlier-turns-failed');
  fail = false;
  const retry = page.getByRole('button', { name: 'Try again' });
  await retry.focus();
  await page.keyboard.press('Enter');
  await expect(page.locator('[data-turn-id]')).toHaveCount(2 * PAGE);
  await expect(page.getByRole('alert').filter({ hasText: 'Could not load' })).toHaveCount(0);
});
