import AxeBuilder from '@axe-core/playwright';
import { expect, test } from '@playwright/test';
import { screenshot } from './support/screens';
import { startScriptedServer, type QilinServer } from './support/server';

const AGENT = `name: e2e
description: Answers in GitHub-flavoured Markdown.
instructions: Follow the script.
tools: [read]
`;

// The model's answer uses every GitHub extension the terminal renders.
const SCRIPT = `turns:
  - say: |
      | tool | calls | status |
      |:-----|------:|:------:|
      | read | 3 | ok |
      | bash | 12 | ~~failed~~ retried |

      - [x] read the notes
      - [ ] run the tests

      Details at https://example.com/docs.
`;

let server: QilinServer;

test.beforeAll(async () => {
  server = await startScriptedServer(AGENT, SCRIPT);
});

test.afterAll(async () => {
  await server?.stop();
});

test("the model's GitHub-flavoured Markdown: a table, strikethrough, a task list, a bare link", async ({
  page,
}) => {
  await page.goto(server.url);
  await page.getByRole('button', { name: 'New session' }).click();
  const prompt = page.getByRole('textbox', { name: 'Prompt' });
  await prompt.fill('Summarise the calls');
  await prompt.press('Enter');

  const table = page.locator('.qp-markdown table');
  await expect(table).toBeVisible();
  await expect(table.locator('th')).toHaveText(['tool', 'calls', 'status']);
  await expect(table.locator('tbody tr')).toHaveCount(2);
  await expect(table.locator('del')).toHaveText('failed');
  // Cells have borders: the table is styled, not bare text in a grid.
  const border = await table
    .locator('td')
    .first()
    .evaluate((cell) => getComputedStyle(cell).borderTopStyle);
  expect(border).toBe('solid');
  const boxes = page.locator('.qp-markdown li input[type="checkbox"]');
  await expect(boxes).toHaveCount(2);
  await expect(boxes.nth(0)).toBeChecked();
  await expect(boxes.nth(1)).not.toBeChecked();
  await expect(page.getByRole('link', { name: 'https://example.com/docs' })).toHaveAttribute(
    'href',
    'https://example.com/docs',
  );
  const results = await new AxeBuilder({ page }).include('.qp-markdown').analyze();
  expect(results.violations.map((v) => `${v.id}: ${v.help}`)).toEqual([]);
  await screenshot(page, 'markdown-gfm');
});
