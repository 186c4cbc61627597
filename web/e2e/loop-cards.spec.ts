// A loop on a real `qilin serve` and the scripted model: the session calls `loop_start`, and the
// loop card fills in live, iteration by iteration — each row appears running, then finished with
// its report — until the check passes on the third iteration, without the page being reloaded.
// After a reload the card shows the whole loop again (from the server's list of loops).
import { expect, test } from '@playwright/test';
import { expectAccessible } from './support/gallery';
import { startScriptedServer, type QilinServer } from './support/server';

const AGENT = `name: e2e-loops
description: Starts a loop, for the loop card's end-to-end test.
instructions: Follow the script.
tools: [bash, loop_start, loop_status, loop_stop]
skills:
  available: []
limits:
  max_steps: 10
review:
  default: allow
checks:
  - id: fixed
    description: fixed.txt exists.
    command: test -f fixed.txt
`;

// Every session plays the script from its start: the session itself and each iteration (a
// fresh child session). Each adds a line to attempts.txt, slowly enough that every iteration is
// seen running; the fourth line (the session's own, then the third iteration's) writes
// fixed.txt. An iteration's loop_start is refused (a child starts no loop) and changes nothing.
const SCRIPT = `turns:
  - calls:
      - tool: bash
        args: {command: "sleep 2; echo try >> attempts.txt; if [ $(wc -l < attempts.txt) -ge 4 ]; then echo ok > fixed.txt; fi"}
      - tool: loop_start
        args: {prompt: "Make the fixed check pass.", until: {checks: [fixed]}, max_iterations: 5}
  - say: "The loop is running."
`;

let server: QilinServer | undefined;
/** The path of the session whose loop passed, once the first test saw it pass. */
let finishedSession: string | undefined;

test.beforeAll(async () => {
  server = await startScriptedServer(AGENT, SCRIPT);
});

test.afterAll(async () => {
  await server?.stop();
});

test('the loop card updates live, iteration by iteration', async ({ page }, testInfo) => {
  test.setTimeout(150_000);
  if (server === undefined) throw new Error('the server did not start');
  await page.emulateMedia({ reducedMotion: 'reduce' });
  await page.goto(server.url);
  await page.getByRole('button', { name: 'New session' }).click();
  await expect(page).toHaveURL(/\/sessions\//);
  // A mark on the window: it would be gone if the page reloaded.
  await page.evaluate(() => {
    (window as unknown as { loopMark: number }).loopMark = 1;
  });
  const prompt = page.getByRole('textbox', { name: 'Prompt' });
  await prompt.fill('Start a loop that makes the fixed check pass.');
  await prompt.press('Enter');

  const main = page.locator('.qa-main');
  const card = main.locator('.qt-loop-card').first();
  await expect(card).toBeVisible({ timeout: 30_000 });
  await expect(card.locator('.qp-row').first()).toContainText('Make the fixed check pass.');
  const rows = card.locator('.qt-loop-card__live li.qt-loop-iteration');
  const row = (number: number) =>
    card.locator(`.qt-loop-card__live li.qt-loop-iteration[data-iteration="${number}"]`);

  // Each iteration shows running first, then finished with its report; the next one follows.
  for (const number of [1, 2, 3]) {
    await expect(row(number)).toHaveAttribute('data-status', 'running', { timeout: 30_000 });
    await expect(rows).toHaveCount(number);
    await expect(card.locator('.qp-row').first()).toHaveAttribute('data-state', 'running');
    await page.screenshot({ path: testInfo.outputPath(`iteration-${number}-running.png`) });
    await expect(row(number)).toHaveAttribute('data-status', 'finished', { timeout: 30_000 });
    // The report: the check's conclusion, the files it changed, the iteration's own session.
    await expect(row(number).locator('[data-check="fixed"] [data-conclusion]')).toHaveAttribute(
      'data-conclusion',
      number < 3 ? 'failure' : 'success',
    );
    await expect(row(number).locator('.qt-loop-files summary')).toBeVisible();
    await expect(row(number).locator('a.qt-child-link')).toHaveAttribute(
      'href',
      /^\/sessions\/[^/]+$/,
    );
    await expect(row(number).locator('.qt-loop-iteration__outcome')).not.toBeEmpty();
  }

  // The check passed on the third iteration: the loop stops, and says why.
  const verdict = card.locator('.qt-loop-card__live .qt-loop__verdict');
  await expect(verdict).toHaveAttribute('data-reason', 'checks_passed', { timeout: 30_000 });
  await expect(rows).toHaveCount(3);
  await expect(card.locator('.qp-row').first()).toHaveAttribute('data-state', 'ok');
  expect(await page.evaluate(() => (window as unknown as { loopMark?: number }).loopMark)).toBe(1);
  await page.screenshot({ path: testInfo.outputPath('loop-passed.png') });
  await expectAccessible(page, '.qt-loop-card');
  finishedSession = new URL(page.url()).pathname;
});

test('after a reload the card shows the whole loop, from the server’s list', async ({ page }) => {
  // The page starts after the loop's events: it reads `GET /api/sessions/{id}/loops`.
  test.skip(finishedSession === undefined, 'the live test did not see the loop pass');
  if (server === undefined) throw new Error('the server did not start');
  await page.goto(`${server.origin}${finishedSession ?? ''}#token=${server.token}`);
  const again = page.locator('.qa-main .qt-loop-card').first();
  await expect(again.locator('.qt-loop-card__live .qt-loop__verdict')).toHaveAttribute(
    'data-reason',
    'checks_passed',
  );
  await expect(again.locator('.qt-loop-card__live li.qt-loop-iteration')).toHaveCount(3);
});
