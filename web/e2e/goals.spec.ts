// A session with a goal on a real `qilin serve` and the scripted model: the page's goal banner
// follows the goal the runtime works on, and its buttons pause, resume, raise the budget and
// clear it. On a phone the banner keeps to the screen's width. A restart of the server brings an
// active goal back paused, which resumes with one click.
import AxeBuilder from '@axe-core/playwright';
import { expect, test, type Page } from '@playwright/test';
import type { GoalRecord, SessionView } from '@qilin-agent/protocol';
import { callServer, startScriptedServer, type QilinServer } from './support/server';
import { promptNewSession } from './support/session';

const AGENT = `name: e2e-goals
description: Works toward a goal, for the goal banner's end-to-end test.
instructions: Follow the script.
tools: [bash]
skills:
  available: []
limits:
  max_steps: 10
review:
  default: allow
`;

// Each continuation turn runs a slow command, so the goal is seen active while a turn runs.
const SLOW_TURN = `  - calls:
      - tool: bash
        args: {command: "sleep 3; echo one more step"}
  - say: "One more step toward the goal."
`;
const SCRIPT = `chunk_delay_ms: 0
turns:
${SLOW_TURN.repeat(8)}`;

const OBJECTIVE = 'Keep the upload retries working while the banner is tested';
const PHONE = { width: 390, height: 844 };

let server: QilinServer | undefined;

/** A new session with a goal of `maxTurns` turns, set through the API. */
async function sessionWithGoal(maxTurns: number): Promise<string> {
  const { id } = await callServer<{ id: string }>(server, 'POST', '/api/sessions', {});
  const goal = await callServer<GoalRecord>(server, 'PUT', `/api/sessions/${id}/goal`, {
    objective: OBJECTIVE,
    tokenBudget: 1_000_000,
    maxTurns,
  });
  expect(goal.status).toBe('active');
  return id;
}

/** The session's goal as the server has it. */
async function goalOf(id: string): Promise<GoalRecord | null> {
  return (await callServer<SessionView>(server, 'GET', `/api/sessions/${id}`)).goal;
}

/** Opens a session in the page. */
async function open(page: Page, id: string) {
  if (server === undefined) throw new Error('the server did not start');
  await page.goto(`${server.origin}/sessions/${id}#token=${server.token}`);
}

test.beforeAll(async () => {
  server = await startScriptedServer(AGENT, SCRIPT);
});

test.afterAll(async () => {
  await server?.stop();
});

test('the banner follows the goal; pause, resume, raise the budget and clear', async ({ page }) => {
  test.setTimeout(120_000);
  const id = await sessionWithGoal(1);
  await page.emulateMedia({ reducedMotion: 'reduce' });
  await open(page, id);
  const banner = page.getByRole('region', { name: 'Goal', exact: true });
  await expect(banner).toBeVisible();
  await expect(banner).toContainText(OBJECTIVE);
  // The runtime works one continuation turn, then the turn budget is spent: the banner says so
  // from the stream's goal events alone.
  await expect(banner).toHaveAttribute('data-goal-status', 'budget_limited', { timeout: 30_000 });
  await expect(
    banner.getByRole('meter', { name: /Turns: 1 turn of 1 turn, 0 turns left/ }),
  ).toBeVisible();

  // Raise the budget by one turn: the goal resumes and a turn runs for it.
  await banner.getByRole('button', { name: 'Raise budget' }).click();
  const turns = banner.getByRole('textbox', { name: 'Turns' });
  await expect(turns).toHaveValue('1');
  await turns.fill('2');
  await banner.getByRole('button', { name: 'Raise and resume' }).click();
  await expect(banner).toHaveAttribute('data-goal-status', 'active');
  expect((await goalOf(id))?.budget.turns).toBe(2);

  // Pause while its turn runs: at once, and the server says the same.
  await banner.getByRole('button', { name: 'Pause' }).click();
  await expect(banner).toHaveAttribute('data-goal-status', 'paused');
  await expect(banner).toContainText('paused by you');
  expect(await goalOf(id)).toMatchObject({ status: 'paused', pausedBecause: 'user' });
  const axe = await new AxeBuilder({ page }).include('.qa-goal').analyze();
  expect(axe.violations).toEqual([]);

  // The interrupted turn counted: its turns are spent, so a plain resume is refused, and the
  // banner says why in the server's words; raising the budget resumes it.
  await banner.getByRole('button', { name: 'Resume' }).click();
  await expect(banner.getByRole('alert')).toContainText('budget is spent');
  await expect(banner).toHaveAttribute('data-goal-status', 'paused');
  await banner.getByRole('button', { name: 'Raise budget' }).click();
  await banner.getByRole('textbox', { name: 'Turns' }).fill('3');
  await banner.getByRole('button', { name: 'Raise and resume' }).click();
  await expect(banner).not.toHaveAttribute('data-goal-status', 'paused');
  await expect(banner.getByRole('alert')).toBeHidden();
  expect((await goalOf(id))?.budget.turns).toBe(3);

  // Clear: the banner goes away, the server has the goal cleared.
  await banner.getByRole('button', { name: 'Clear' }).click();
  await expect(banner).toBeHidden();
  expect((await goalOf(id))?.status).toBe('cleared');
});

test('a goal active when the server restarts comes back paused, and resumes with one click', async ({
  page,
}) => {
  test.setTimeout(120_000);
  if (server === undefined) throw new Error('the server did not start');
  const id = await sessionWithGoal(3);
  await open(page, id);
  const banner = page.getByRole('region', { name: 'Goal', exact: true });
  await expect(banner).toHaveAttribute('data-goal-status', 'active');
  await server.restart();
  await open(page, id);
  await expect(banner).toHaveAttribute('data-goal-status', 'paused', { timeout: 30_000 });
  await expect(banner).toContainText('paused: the server restarted');
  await banner.getByRole('button', { name: 'Resume' }).click();
  await expect(banner).not.toHaveAttribute('data-goal-status', 'paused');
  await banner.getByRole('button', { name: 'Clear' }).click();
  await expect(banner).toBeHidden();
});

test.describe('on a phone', () => {
  test.use({ viewport: PHONE, colorScheme: 'dark', locale: 'zh-CN' });

  test('the banner keeps to the screen’s width, its raise form too', async ({ page }) => {
    test.setTimeout(120_000);
    const id = await sessionWithGoal(1);
    await open(page, id);
    const banner = page.locator('.qa-goal');
    await expect(banner).toHaveAttribute('data-goal-status', 'budget_limited', {
      timeout: 30_000,
    });
    await banner.getByRole('button', { name: '提高预算' }).click();
    await expect(banner.locator('form')).toBeVisible();
    const box = await banner.boundingBox();
    expect((box?.x ?? 0) + (box?.width ?? Infinity)).toBeLessThanOrEqual(PHONE.width);
    for (const part of await banner.locator('meter, input, button').all()) {
      const partBox = await part.boundingBox();
      expect((partBox?.x ?? 0) + (partBox?.width ?? Infinity)).toBeLessThanOrEqual(PHONE.width);
    }
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
      PHONE.width,
    );
    await banner.screenshot({ path: test.info().outputPath('goal-banner-phone.png') });
    await banner.getByRole('button', { name: '清除' }).click();
    await expect(banner).toBeHidden();
  });
});

// The model's own goal calls, recorded by the real runtime, read by the goal cards.
const TOOLS_AGENT = `name: e2e-goal-tools
description: Calls the goal tools, for the goal cards' end-to-end test.
instructions: Follow the script.
tools: [bash, goal_get, goal_create, goal_update]
skills:
  available: []
limits:
  max_steps: 10
review:
  default: allow
`;

const TOOLS_OBJECTIVE = 'Write the release notes for 0.4';
const TOOLS_SCRIPT = `chunk_delay_ms: 0
turns:
  - calls:
      - tool: goal_get
        args: {}
  - calls:
      - tool: goal_create
        args: {objective: ${JSON.stringify(TOOLS_OBJECTIVE)}, token_budget: 50000, max_turns: 4}
  - calls:
      - tool: goal_get
        args: {}
  - calls:
      - tool: goal_update
        args: {status: blocked, reason: "The changelog of 0.4 is not in the workspace.", evidence: "ls docs: no CHANGELOG"}
  - say: "I need the changelog to go on."
`;

test.describe('the goal tools’ cards', () => {
  let tools: QilinServer | undefined;

  test.beforeAll(async () => {
    tools = await startScriptedServer(TOOLS_AGENT, TOOLS_SCRIPT);
  });

  test.afterAll(async () => {
    await tools?.stop();
  });

  test('each goal call of a real session shows its goal card, not the generic one', async ({
    page,
  }) => {
    test.setTimeout(120_000);
    await promptNewSession(page, tools, 'Write the release notes');
    const rows = page.locator('.qt-card .qp-row');
    await expect(rows.filter({ hasText: 'Tool call ·' })).toHaveCount(0);
    await expect(rows.filter({ hasText: 'Read goal' })).toHaveCount(2);
    await expect(rows.filter({ hasText: 'Read goal' }).first()).toContainText('No goal');
    const created = page.locator('.qt-card').filter({ hasText: 'Set goal' });
    await expect(created.locator('.qp-row')).toContainText(TOOLS_OBJECTIVE);
    await created.locator('button.qp-row__main').click();
    await expect(
      created.getByRole('meter', { name: /Turns: 0 turns of 4 turns, 4 turns left/ }),
    ).toBeVisible();
    // The card says what the call recorded: active then, blocked since.
    await expect(created.locator('.qt-goal-status')).toHaveText('active');
    const updated = page.locator('.qt-card').filter({ hasText: 'Update goal' });
    await expect(updated.locator('.qp-row')).toContainText('mark blocked');
    await expect(updated.locator('.qp-row')).toContainText('accepted');
    await updated.locator('button.qp-row__main').click();
    await expect(updated.locator('.qt-goal-status')).toHaveText('blocked');
    await expect(updated).toContainText('ls docs: no CHANGELOG');
    // The banner shows the settled goal: blocked, nothing to resume, only Clear.
    const banner = page.getByRole('region', { name: 'Goal', exact: true });
    await expect(banner).toHaveAttribute('data-goal-status', 'blocked');
    await expect(banner.getByRole('button')).toHaveText(['Clear']);
    // As the other page specs: nothing serious (the cards' block labels are h4 under the page's
    // h2, a moderate heading-order finding every expanded card shares).
    const axe = await new AxeBuilder({ page }).include('.qa-main').analyze();
    expect(axe.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')).toEqual(
      [],
    );
  });
});
