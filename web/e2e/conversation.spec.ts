import AxeBuilder from '@axe-core/playwright';
import { expect, test, type Page } from '@playwright/test';
import { startServer, type QilinServer } from './support/server';

// The agent asks before every `bash` call that echoes "approved", and code mode is on.
const AGENT = `name: e2e
description: Drives the web conversation's end-to-end test.
instructions: Follow the script.
tools: [read, edit, bash, question]
code_mode: true
skills:
  available: []
limits:
  max_steps: 10
review:
  default: allow
  rules:
    - tool: bash
      when:
        command: 'approved'
      decision: ask
      reason: the test approves this one
`;

// Streamed slowly enough that each call is seen preparing, then running.
const SCRIPT = `chunk_delay_ms: 25
turns:
  - say: "Let me **look** around first."
    calls:
      - tool: bash
        args: {command: "sleep 1; echo 'hello from bash'"}
      - tool: bash
        args: {command: "echo broken >&2; exit 3"}
  - say: "Now some code."
    calls:
      - tool: run_code
        args:
          code: |
            notes = sdk.tool.call("read", {"path": "notes.md"})
            print("read", len(notes["text"]), "characters")
  - say: "A small edit."
    calls:
      - tool: edit
        args: {path: notes.md, old_string: "Some notes.", new_string: "Some better notes."}
  - calls:
      - tool: question
        args:
          questions:
            - {id: colour, question: "Which colour should the report use?", options: [red, blue]}
  - calls:
      - tool: bash
        args: {command: "echo approved"}
  - say: "All done: the report will be **blue**."
`;

let server: QilinServer;

test.beforeAll(async () => {
  server = await startServer(
    { 'e2e.agent': AGENT, 'script.yaml': SCRIPT, 'notes.md': '# Notes\n\nSome notes.\n' },
    ['--agent', 'e2e.agent', '--model', 'scripted:script.yaml'],
  );
});

test.afterAll(async () => {
  await server?.stop();
});

/** Records every state each call's card goes through, from now on. */
async function recordCallStates(page: Page): Promise<void> {
  await page.evaluate(() => {
    const seen: Record<string, string[]> = {};
    (window as unknown as { callStates: Record<string, string[]> }).callStates = seen;
    const look = () => {
      for (const wrapper of document.querySelectorAll<HTMLElement>('[data-chat-call-id]')) {
        const id = wrapper.dataset.chatCallId ?? '';
        const state = wrapper.querySelector<HTMLElement>('[data-state]')?.dataset.state;
        if (state === undefined) continue;
        const list = (seen[id] ??= []);
        if (list[list.length - 1] !== state) list.push(state);
      }
    };
    new MutationObserver(look).observe(document.body, {
      subtree: true,
      childList: true,
      attributes: true,
      attributeFilter: ['data-state'],
    });
    look();
  });
}

async function callStates(page: Page): Promise<Record<string, string[]>> {
  return page.evaluate(
    () => (window as unknown as { callStates: Record<string, string[]> }).callStates,
  );
}

async function axe(page: Page): Promise<void> {
  const results = await new AxeBuilder({ page }).analyze();
  expect(
    results.violations.map(
      (v) => `${v.id}: ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`,
    ),
  ).toEqual([]);
}

test('a live turn: calls stream, requests are answered from two pages, a reload keeps the page', async ({
  page,
  context,
}, testInfo) => {
  await page.goto(server.url);
  // The token left the address bar once traded for the cookie.
  await expect(page).not.toHaveURL(/token=/);
  await page.getByRole('button', { name: 'New session' }).click();
  await expect(page).toHaveURL(/\/sessions\//);
  await expect(page.getByText('scripted:script.yaml').first()).toBeVisible();
  await axe(page);
  await page.screenshot({ path: testInfo.outputPath('empty-session.png') });

  await recordCallStates(page);
  const prompt = page.getByRole('textbox', { name: 'Prompt' });
  await prompt.fill('Look around');
  await prompt.press('Shift+Enter');
  await prompt.pressSequentially('and ask me things.');
  await expect(prompt).toHaveValue('Look around\nand ask me things.');
  await prompt.press('Enter');
  await expect(prompt).toHaveValue('');
  await expect(page.getByText('A turn is running: wait for it to end, or stop it.')).toBeVisible();
  await expect(page.getByRole('button', { name: 'Send' })).toBeDisabled();

  // The text arrives as Markdown; the bash call goes preparing → running → ok.
  await expect(page.locator('.qc-markdown strong', { hasText: 'look' })).toBeVisible();
  await expect(
    page.locator('[data-chat-call-id="call_1"] [data-state="ok"]').first(),
  ).toBeVisible();
  // A failed command shows its exit capsule.
  await expect(page.locator('[data-chat-call-id="call_2"] .qp-capsule')).toHaveText(/exit 3/);
  // The code's call appears nested under run_code.
  await expect(
    page
      .getByRole('list', { name: 'Calls made by run_code' })
      .getByRole('button', { name: /Read.*notes\.md/ }),
  ).toBeVisible();

  // The edit shows its diff; its file opens in the sidebar, line-numbered.
  const editRow = page.getByRole('button', { name: /Edit.*notes\.md.*1 lines added, 1 removed/ });
  await editRow.click();
  await expect(editRow).toHaveAttribute('aria-expanded', 'true');
  await expect(page.locator('.qp-diff').first()).toBeVisible();
  await expect(page.locator('.qp-diff').first()).toContainText('Some better notes.');
  await page.getByRole('button', { name: 'Open notes.md' }).first().click();
  const preview = page.getByRole('complementary', { name: 'File preview: notes.md' });
  await expect(preview).toContainText('Some better notes.');
  await expect(preview.locator('.qa-file__number').first()).toHaveText('1');
  await page.screenshot({ path: testInfo.outputPath('file-preview.png') });
  await preview.getByRole('button', { name: 'Close the preview' }).click();
  await expect(preview).toHaveCount(0);

  // The question waits; a reload mid-turn shows the same page, the request still answerable.
  const question = page.locator('.qc-request[data-request-state="open"]');
  await expect(question).toBeVisible();
  const states = await callStates(page);
  expect(states.call_1).toEqual(['preparing', 'running', 'ok']);
  await page.screenshot({ path: testInfo.outputPath('question-open.png') });
  await axe(page);

  await page.reload();
  await expect(page.locator('.qc-request[data-request-state="open"]')).toBeVisible();
  await expect(page.locator('[data-turn-id]')).toHaveCount(1);
  await expect(page.locator('[data-chat-call-id="call_1"]')).toHaveCount(1);

  // A second page on the same session sees the answer the first one gives.
  const second = await context.newPage();
  await second.goto(page.url());
  await expect(second.locator('.qc-request[data-request-state="open"]')).toBeVisible();
  await page.getByRole('radio', { name: 'blue' }).check();
  await page.getByRole('button', { name: 'Send answer' }).click();
  await expect(second.locator('.qc-request[data-request-state="answered"]')).toBeVisible();
  await expect(second.getByText(/Which colour should the report use\? → blue/)).toBeVisible();

  // The approval is answered from the second page; the first sees it.
  const approval = second.locator('.qc-request[data-request-state="open"]');
  await expect(approval).toContainText('Approval needed: bash');
  await second.screenshot({ path: testInfo.outputPath('approval-open.png') });
  await approval.getByRole('button', { name: 'Allow once' }).click();
  await expect(page.locator('.qc-request[data-request-state="approved"]')).toBeVisible();

  // The turn ends with its reason and usage, once, on both pages.
  for (const each of [page, second]) {
    await expect(each.getByText('Turn completed')).toHaveCount(1);
    await expect(each.getByText(/cached tokens/)).toBeVisible();
    await expect(each.locator('.qc-markdown strong', { hasText: 'blue' })).toBeVisible();
  }
  await expect(page.getByRole('button', { name: 'Send' })).toBeDisabled(); // empty prompt
  await page.screenshot({ path: testInfo.outputPath('turn-done.png') });
  await axe(page);

  // Switch the language and the theme at run time.
  await page.getByRole('combobox', { name: 'Language' }).selectOption('zh-CN');
  await expect(page.getByText('本轮完成')).toBeVisible();
  await expect(page.locator('html')).toHaveAttribute('lang', 'zh-CN');
  await page.getByRole('combobox', { name: '主题' }).selectOption('dark');
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
  await page.screenshot({ path: testInfo.outputPath('zh-dark.png') });
  await axe(page);
  await second.close();
});
