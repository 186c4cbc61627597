// A parent session whose `agent` call starts a child session: a real `qilin serve`, the parent
// and the child each on their own scripted model. The agent card shows the child's calls while
// they happen, then opens the child session.
import AxeBuilder from '@axe-core/playwright';
import { expect, test } from '@playwright/test';
import { startScriptedServer, type QilinServer } from './support/server';

const PARENT_AGENT = `name: e2e
description: Drives the subagent end-to-end test.
instructions: Follow the script.
tools: [agent, read, bash]
skills:
  available: []
limits:
  max_steps: 10
review:
  default: allow
`;

// The parent starts one foreground child, then answers.
const PARENT_SCRIPT = `turns:
  - calls:
      - tool: agent
        args: {agent: scout, prompt: "Read the notes and say what they are about.", description: "Survey the notes"}
  - say: "The scout says the notes are about the launch."
`;

// The child: its own agent file and script, slow enough that each call is seen running.
const CHILD_AGENT = `name: scout
description: Reads the notes for the e2e parent.
instructions: Follow the script.
model: scripted:child.yaml
tools: [read, bash]
skills:
  available: []
limits:
  max_steps: 10
review:
  default: allow
`;

const CHILD_SCRIPT = `chunk_delay_ms: 20
turns:
  - calls:
      - tool: bash
        args: {command: "sleep 2; echo first look"}
  - calls:
      - tool: read
        args: {path: notes.md}
  - calls:
      - tool: bash
        args: {command: "sleep 1; echo third look"}
  - calls:
      - tool: bash
        args: {command: "sleep 2; echo fourth look"}
  - say: "The notes are about the launch."
`;

let server: QilinServer | undefined;

test.beforeAll(async () => {
  server = await startScriptedServer(PARENT_AGENT, PARENT_SCRIPT, {
    'scout.agent': CHILD_AGENT,
    'child.yaml': CHILD_SCRIPT,
    'notes.md': '# Notes\n\nThe launch is on Friday.\n',
  });
});

test.afterAll(async () => {
  await server?.stop();
});

test('the agent card shows the child’s calls live and opens the child session', async ({
  page,
}, testInfo) => {
  test.setTimeout(120_000);
  if (server === undefined) throw new Error('the server did not start');
  await page.goto(server.url);
  await page.getByRole('button', { name: 'New session' }).click();
  await expect(page).toHaveURL(/\/sessions\//);
  const parentUrl = page.url();
  const prompt = page.getByRole('textbox', { name: 'Prompt' });
  await prompt.fill('Ask a scout about the notes.');
  await prompt.press('Enter');

  // The parent's agent card (the transcript's root call, not a call of the child's).
  const main = page.locator('.qa-main');
  const card = main.locator('.qt-tree > [data-chat-call-id="call_1"]').first();
  const row = card.locator(':scope > .qt-card .qp-row').first();
  await expect(row).toContainText('Survey the notes');
  const child = card.locator('[data-child-session]');

  // The child's first call shows while the parent's call still runs: live, not after.
  const childCalls = child.locator('.qt-child-calls__call > .qt-tree > .qt-call');
  await expect(childCalls.first()).toBeVisible();
  await expect(row).toHaveAttribute('data-state', 'running');
  await expect(childCalls.first().locator('.qp-row').first()).toHaveAttribute(
    'data-state',
    'running',
  );
  await page.screenshot({ path: testInfo.outputPath('child-live.png') });

  // The child's four calls, the latest three shown, the first on demand.
  await expect(page.getByText('Turn completed')).toBeVisible({ timeout: 60_000 });
  await expect(row).toHaveAttribute('data-state', 'ok');
  await expect(childCalls).toHaveCount(3);
  await child.getByRole('button', { name: 'Show 1 earlier call' }).click();
  await expect(childCalls).toHaveCount(4);
  // In the child's order, each through its own card (the terminal card, the read card).
  await expect(childCalls.nth(0)).toContainText('first look');
  await expect(childCalls.nth(1)).toContainText('notes.md');
  await expect(childCalls.nth(3)).toContainText('fourth look');
  await expect(child.locator('.qp-row[data-state="ok"]')).toHaveCount(4);
  const checked = await new AxeBuilder({ page }).include('.qa-main').analyze();
  expect(
    checked.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical'),
  ).toEqual([]);

  // The child session opens from the card, in the page; the sidebar shows it under its parent.
  await card.locator(':scope > .qt-card button.qp-row__main').first().click();
  const link = card.getByRole('link', { name: 'Open the child session' });
  const href = await link.getAttribute('href');
  expect(href).toMatch(/^\/sessions\/[^/]+$/);
  await link.click();
  await expect(page).toHaveURL(new RegExp(`${href ?? ''}$`));
  await expect(page.locator('.qa-session__header')).toContainText('scout');
  await expect(main.locator('.qt-tree > [data-chat-call-id]')).toHaveCount(4);
  const family = page.getByRole('list', { name: /^Child sessions of / });
  await expect(family.locator('a[aria-current="page"]')).toHaveAttribute('href', href ?? '');
  await page.screenshot({ path: testInfo.outputPath('child-session.png') });

  // Back in the parent, the card (read from history now) follows the child only when asked.
  await page.goto(parentUrl);
  const again = main.locator('.qt-tree > [data-chat-call-id="call_1"]').first();
  const show = again.getByRole('button', { name: 'Show the child’s calls' });
  await expect(show).toHaveAttribute('aria-expanded', 'false');
  await show.click();
  await expect(again.locator('.qt-child-calls__call > .qt-tree > .qt-call')).toHaveCount(3);
});
