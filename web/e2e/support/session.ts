// A session started from the page on a real `qilin serve`, as a person starts one.
import { expect, type Page } from '@playwright/test';
import type { QilinServer } from './server';

/**
 * Opens the page on `server`, starts a new session, sends `prompt` from the composer and waits
 * until the turn completed.
 */
export async function promptNewSession(
  page: Page,
  server: QilinServer | undefined,
  prompt: string,
): Promise<void> {
  if (server === undefined) throw new Error('the server did not start');
  await page.goto(server.url);
  await page.getByRole('button', { name: 'New session' }).click();
  await expect(page).toHaveURL(/\/sessions\//);
  await page.getByRole('textbox', { name: /prompt/i }).fill(prompt);
  await page.getByRole('button', { name: 'Send' }).click();
  await expect(page.locator('.qc-turn__end--completed')).toBeVisible({ timeout: 30_000 });
}
