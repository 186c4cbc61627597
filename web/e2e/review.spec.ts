// Auto review on a real `qilin serve` (with the review branch's runtime and routes): the agent's bash calls go to a reviewer model (the
// scripted model, its own script in the workspace), which refuses to publish. The page shows the
// denial card with the reviewer's reason for the person; "Allow this call" makes the person's
// grant, the server queues the retry turn, and the model's repeated call runs by the grant and
// succeeds.
import AxeBuilder from '@axe-core/playwright';
import { expect, test } from '@playwright/test';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startScriptedServer, type QilinServer } from './support/server';

const AGENT = `name: e2e-review
description: Publishes a report; a reviewer model judges its shell commands.
instructions: Follow the script.
tools: [bash]
skills:
  available: []
limits:
  max_steps: 10
review:
  default: allow
  rules:
    - tool: bash
      decision: auto
  auto:
    model: scripted:reviewer.yaml
    rules: "Allowed: reading files and running tests. Never: publishing anything."
`;

const PUBLISH = 'echo published > published.txt';

// The agent: the call, its answer to the refusal; then, in the retry turn the person's grant
// queues, the very same call again and its answer.
const SCRIPT = `turns:
  - say: "Publishing the report."
    calls:
      - tool: bash
        args: {command: "${PUBLISH}"}
  - say: "The reviewer refused to publish; I stopped there."
  - say: "You allowed it: publishing again."
    calls:
      - tool: bash
        args: {command: "${PUBLISH}"}
  - say: "Published."
`;

const USER_REASON = 'publishing the report is not allowed without you';

// The reviewer: one verdict, a refusal. The retry runs by the grant, so it is never asked again
// (were it asked, the script's end would answer no verdict: a failure, not an allow).
const REVIEWER = `turns:
  - say: '{"decision": "deny", "risk": "high", "user_reason": "${USER_REASON}", "model_message": "Publishing needs the user. Do not retry; ask the user."}'
`;

let server: QilinServer;

test.beforeAll(async () => {
  server = await startScriptedServer(AGENT, SCRIPT, { 'reviewer.yaml': REVIEWER });
});

test.afterAll(async () => {
  await server?.stop();
});

test('a denial card with the reason; "Allow this call" lets the retry run', async ({
  page,
}, testInfo) => {
  test.setTimeout(90_000);
  await page.emulateMedia({ reducedMotion: 'reduce' });
  await page.goto(server.url);
  await page.getByRole('button', { name: 'New session' }).click();
  const prompt = page.getByRole('textbox', { name: 'Prompt' });
  await prompt.fill('Publish the report');
  await prompt.press('Enter');

  // The reviewer refused: the denial card says so, with its risk, and the reason for the person.
  const refused = page.locator('[data-chat-call-id="call_1"]');
  const card = refused.locator('.qt-card[data-state="denied"]');
  await expect(card).toBeVisible({ timeout: 30_000 });
  const row = card.locator('.qp-row');
  await expect(row).toContainText('Auto review: denied');
  await expect(row).toContainText('high risk');
  await row.locator('button.qp-row__main').click();
  await expect(card.locator('.qt-denied')).toHaveText(`Not run: ${USER_REASON}`);
  await expect(card).toContainText('Judged by scripted:reviewer.yaml');
  // The model's own message is not the person's.
  await expect(card).not.toContainText('Do not retry');
  await expect(page.getByText('The reviewer refused to publish; I stopped there.')).toBeVisible();
  expect(existsSync(join(server.workspace, 'published.txt'))).toBe(false);
  await page.screenshot({ path: testInfo.outputPath('denied.png') });
  const axe = await new AxeBuilder({ page }).include('.qc-transcript').analyze();
  expect(axe.violations).toEqual([]);

  // Allow it, from the keyboard.
  const allow = card.getByRole('button', { name: 'Allow this call' });
  await allow.focus();
  await page.keyboard.press('Enter');
  await expect(card.getByRole('button', { name: 'Allowed' })).toHaveAttribute(
    'aria-disabled',
    'true',
  );
  await expect(card.getByRole('alert')).toHaveCount(0);

  // The retry turn: the same call runs by the grant, and succeeds.
  const retry = page.locator('[data-chat-call-id="call_2"]');
  await expect(retry.locator('.qt-card[data-state="ok"]')).toBeVisible({ timeout: 30_000 });
  await expect(page.getByText('Published.', { exact: true })).toBeVisible();
  expect(readFileSync(join(server.workspace, 'published.txt'), 'utf8')).toBe('published\n');
  await expect(retry.getByRole('img', { name: /you allowed it/ })).toBeVisible();
  await page.screenshot({ path: testInfo.outputPath('allowed.png') });

  // A second click has nothing to do: the call is allowed once, and says so.
  await card.getByRole('button', { name: 'Allowed' }).focus();
  await page.keyboard.press('Enter');
  await expect(card.getByRole('alert')).toHaveCount(0);
  const after = await new AxeBuilder({ page }).include('.qc-transcript').analyze();
  expect(after.violations).toEqual([]);
});
