import AxeBuilder from '@axe-core/playwright';
import { expect, test } from '@playwright/test';
import { startScriptedServer, type QilinServer } from './support/server';

const AGENT = `name: e2e-stop
description: Runs long commands for the interrupt and restart test.
instructions: Follow the script.
tools: [bash]
skills:
  available: []
limits:
  max_steps: 10
`;

const SCRIPT = `turns:
  - say: "Starting the long check."
    calls:
      - tool: bash
        args: {command: "sleep 60"}
  - say: "Starting it again."
    calls:
      - tool: bash
        args: {command: "sleep 60"}
  - say: "Back after the restart."
`;

let server: QilinServer;

test.beforeAll(async () => {
  server = await startScriptedServer(AGENT, SCRIPT);
});

test.afterAll(async () => {
  await server?.stop();
});

test('stop interrupts a turn; a server restart mid-turn reconnects and closes the dangling call', async ({
  page,
}, testInfo) => {
  await page.goto(server.url);
  await page.getByRole('button', { name: 'New session' }).click();
  const prompt = page.getByRole('textbox', { name: 'Prompt' });
  await prompt.fill('Run the long check');
  await prompt.press('Enter');

  // Stop: the running call and the turn end interrupted, and the composer is free again.
  await expect(
    page.locator('[data-chat-call-id="call_1"] .qt-card[data-state="running"]'),
  ).toBeVisible();
  await page.getByRole('button', { name: 'Stop' }).click();
  await expect(
    page.locator('[data-chat-call-id="call_1"] .qt-card[data-state="interrupted"]'),
  ).toBeVisible();
  await expect(page.getByText('Turn interrupted')).toBeVisible();
  await expect(page.getByRole('button', { name: 'Stop' })).toHaveCount(0);
  await page.screenshot({ path: testInfo.outputPath('interrupted.png') });

  // A second turn; the server restarts under it.
  await prompt.fill('Again');
  await prompt.press('Enter');
  await expect(
    page.locator('[data-chat-call-id="call_2"] .qt-card[data-state="running"]'),
  ).toBeVisible();
  const restarted = server.restart();
  await expect(page.getByRole('status').filter({ hasText: 'Reconnecting…' })).toBeVisible();
  await page.screenshot({ path: testInfo.outputPath('reconnecting.png') });
  await restarted;
  await expect(page.getByRole('status').filter({ hasText: 'Reconnecting…' })).toHaveCount(0, {
    timeout: 15_000,
  });
  await expect(
    page.locator('[data-chat-call-id="call_2"] .qt-card[data-state="interrupted"]'),
  ).toBeVisible();
  await expect(page.getByText('Turn interrupted')).toHaveCount(2);
  // Every event once: each call and each turn shows once, as a fresh load of the page shows.
  await expect(page.locator('[data-chat-call-id]')).toHaveCount(2);
  await expect(page.locator('[data-turn-id]')).toHaveCount(2);
  const live = await page.locator('.qc-transcript').innerText();
  await page.reload();
  await expect(page.getByText('Turn interrupted')).toHaveCount(2);
  // Asked again until it settles: the page may still be folding the history it read.
  await expect.poll(() => page.locator('.qc-transcript').innerText()).toBe(live);

  // The conversation goes on after the restart.
  await prompt.fill('Carry on');
  await prompt.press('Enter');
  await expect(page.getByText('Back after the restart.')).toBeVisible();
  await expect(page.getByText('Turn completed')).toBeVisible();
  const results = await new AxeBuilder({ page }).analyze();
  expect(results.violations.map((v) => v.id)).toEqual([]);
});
