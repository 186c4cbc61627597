// The sidebar's search covers the sessions' content: a hit opens its session at the exact card
// (loading the earlier turns it is in), scrolled into view and highlighted.
import AxeBuilder from '@axe-core/playwright';
import { expect, test, type Page } from '@playwright/test';
import { screenshot } from './support/screens';
import { callServer, recordTurn, startScriptedServer, type QilinServer } from './support/server';

// More turns than the first page (20), so the first turn's card is not loaded when the
// session opens.
const TURNS = 26;

const AGENT = `name: e2e-search
description: Leaves something to find in its first turn, then answers briefly.
instructions: Follow the script.
tools: [bash]
skills:
  available: []
limits:
  max_steps: 5
review:
  default: allow
`;

const SCRIPT = `chunk_delay_ms: 0
turns:
  - calls:
      - tool: bash
        args: {command: "echo zebrafish tanks cleaned"}
  - say: "The tanks are clean."
${Array.from({ length: TURNS - 1 }, (_, turn) => `  - say: "Answer ${turn + 1}, nothing to see here."`).join('\n')}
`;

let server: QilinServer;
let sessionId: string;

test.beforeAll(async () => {
  server = await startScriptedServer(AGENT, SCRIPT);
  ({ id: sessionId } = await callServer<{ id: string }>(server, 'POST', '/api/sessions', {}));
  for (let turn = 0; turn < TURNS; turn += 1) {
    await recordTurn(
      server,
      sessionId,
      {
        prompt: turn === 0 ? 'Tidy the aquarium' : `Prompt ${turn}`,
        clientTurnId: `search-${turn}`,
      },
      turn + 1,
    );
  }
});

test.afterAll(async () => {
  await server?.stop();
});

/** Opens the page (not a session) and searches the sidebar for `query`. */
async function searchFor(page: Page, query: string) {
  await page.goto(server.url);
  await expect(page.getByRole('link', { name: /Tidy the aquarium/ }).first()).toBeVisible();
  await page.getByRole('searchbox', { name: 'Search sessions' }).fill(query);
  return page.getByRole('region', { name: 'Found in the sessions' });
}

test('a hit in a call opens its session at the card, loaded, scrolled into view and highlighted', async ({
  page,
}) => {
  const earlierPages: string[] = [];
  page.on('request', (request) => {
    const before = new URL(request.url()).searchParams.get('before');
    if (request.url().includes('/snapshot?') && before !== null) earlierPages.push(before);
  });
  const hits = await searchFor(page, 'zebrafish');
  const hit = hits.getByRole('link').first();
  await expect(hit).toBeVisible();
  await expect(hit.locator('mark').first()).toHaveText(/zebrafish/i);
  await expect(hit).toContainText('bash');
  const href = await hit.getAttribute('href');
  expect(href).toMatch(new RegExp(`^/sessions/${sessionId}\\?at=call:`));
  const callId = decodeURIComponent((href ?? '').split('?at=call:')[1] ?? '');
  const axe = await new AxeBuilder({ page }).include('.qa-sidebar').analyze();
  expect(axe.violations.map((v) => `${v.id}: ${v.help}`)).toEqual([]);
  await screenshot(page, 'search-hits');

  await hit.click();
  await expect(page).toHaveURL(`${server.origin}${href}`);
  const card = page.locator(`[data-chat-anchor-key="call:${callId}"]`);
  await expect(card).toHaveClass(/qc-revealed/);
  await expect(card).toBeInViewport();
  await expect(card).toContainText('echo zebrafish tanks cleaned');
  // The card was in the first turn: the earlier page it is in was loaded to show it.
  expect(earlierPages).toEqual([String(TURNS - 20)]);
  await expect(page.locator('[data-turn-id]')).toHaveCount(TURNS);
  // The highlight fades out (an animation), and the card stays where it was put.
  expect(await card.evaluate((element) => getComputedStyle(element).animationName)).toBe(
    'qc-reveal',
  );
  await screenshot(page, 'search-revealed');
  await page.waitForTimeout(500);
  await expect(card).toBeInViewport();
});

test('a hit in a prompt opens its turn; with reduced motion the highlight stays still', async ({
  page,
}) => {
  await page.emulateMedia({ reducedMotion: 'reduce' });
  const hits = await searchFor(page, 'aquarium');
  const hit = hits.getByRole('link').first();
  await expect(hit).toHaveAttribute('href', new RegExp(`^/sessions/${sessionId}\\?at=seq:\\d+$`));
  await hit.click();
  const turn = page.locator('[data-chat-anchor-key^="turn:"]', { hasText: 'Tidy the aquarium' });
  await expect(turn).toHaveClass(/qc-revealed/);
  await expect(turn).toBeInViewport();
  expect(await turn.evaluate((element) => getComputedStyle(element).animationName)).toBe('none');
  expect(await turn.evaluate((element) => getComputedStyle(element).boxShadow)).not.toBe('none');
  // The page's own address opens there again after a reload.
  await page.reload();
  await expect(page.locator('[data-chat-anchor-key^="turn:"].qc-revealed')).toBeInViewport();
});
