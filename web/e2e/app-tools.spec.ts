// An application's own tools in the web client: `invoices serve` hosts the example
// application's runtime with Qilin's server, and its calls render as generic cards.
import { expect, test } from '@playwright/test';
import { startInvoicesServer, type AppServer } from './support/server';

let server: AppServer | undefined;

test.beforeAll(async () => {
  server = await startInvoicesServer();
});

test.afterAll(async () => {
  await server?.stop();
});

test("an application's tools show as generic cards, a code call nested under run_code", async ({
  page,
}) => {
  if (server === undefined) throw new Error('the server did not start');
  await page.goto(server.url);
  await page.getByRole('button', { name: 'New session' }).click();
  await expect(page).toHaveURL(/\/sessions\//);
  const prompt = page.getByRole('textbox', { name: 'Prompt' });
  await prompt.fill('Invoice Acme GmbH, then total what we invoiced in EUR.');
  await prompt.press('Enter');
  await expect(page.getByText('Turn completed')).toBeVisible();

  // The dual-active tool, called directly: a root generic card, summarised from its arguments
  // (never from the header the tool presents on the server).
  const created = page.locator('[data-chat-call-id="call_1"]');
  await expect(
    created.getByRole('button', { name: /Tool call · create_invoice\s*EUR/ }),
  ).toBeVisible();
  await expect(created).not.toContainText('Create an invoice');
  await expect(created.locator('[data-state="ok"]').first()).toBeVisible();

  // The code-mode-only tool, called from Python: nested under the run_code card, and not a
  // root card of its own.
  const nested = page.getByRole('list', { name: 'Calls made by run_code' });
  await expect(
    nested.getByRole('button', { name: /Tool call · invoice_totals\s*EUR/ }),
  ).toBeVisible();
  await expect(nested.locator('[data-state="ok"]').first()).toBeVisible();
  await expect(page.getByRole('button', { name: /Tool call · invoice_totals/ })).toHaveCount(1);
});
