// The real page writes a path under the server user's home as `~/…` and a path in the session's
// workspace relative to it: the server names both in the session's view, the page passes them
// to the call tree, and the host still opens the path the call gave.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { startScriptedServer, type QilinServer } from './support/server';

const AGENT = `name: e2e-home
description: Reads a file in the workspace and one under the user's home.
instructions: Follow the script.
tools: [read]
skills:
  available: []
limits:
  max_steps: 10
`;

/** The home folder the server runs with; the workspace is elsewhere (its own temp folder). */
const HOME = mkdtempSync(join(tmpdir(), 'qilin-e2e-home-'));

const SCRIPT = `turns:
  - say: "Reading both."
    calls:
      - tool: read
        args: {path: "plan.md"}
      - tool: read
        args: {path: "${HOME}/todo.txt"}
  - say: "Done."
`;

let server: QilinServer;

test.beforeAll(async () => {
  writeFileSync(join(HOME, 'todo.txt'), 'outside the workspace\n');
  server = await startScriptedServer(AGENT, SCRIPT, { 'plan.md': '# Plan\n' }, { HOME });
});

test.afterAll(async () => {
  await server?.stop();
  rmSync(HOME, { recursive: true, force: true });
});

test('a path under the server user’s home shows as ~/…; the host gets it whole', async ({
  page,
}) => {
  await page.goto(server.url);
  await page.getByRole('button', { name: 'New session' }).click();
  const prompt = page.getByRole('textbox', { name: 'Prompt' });
  await prompt.fill('Read the plan and my todo list');
  await prompt.press('Enter');
  await expect(page.getByText('Turn completed')).toBeVisible();

  const inside = page.locator('[data-chat-call-id="call_1"] .qp-row').first();
  await expect(inside).toContainText('Read · plan.md');
  // The file tools refuse a path outside the workspace; the row still names it, shortened.
  const outside = page.locator('[data-chat-call-id="call_2"] .qp-row').first();
  await expect(outside).toContainText('Read · ~/todo.txt');
  await expect(outside).not.toContainText(HOME);
  await outside.getByRole('button', { name: `Open ${HOME}/todo.txt` }).click();
  await expect(
    page.getByRole('complementary', { name: `File preview: ${HOME}/todo.txt` }),
  ).toBeVisible();
});
