import AxeBuilder from '@axe-core/playwright';
import { expect, test, type Page } from '@playwright/test';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { screenshot } from './support/screens';
import { startScriptedServer, type QilinServer } from './support/server';

// The agent asks before every `bash` call that echoes "approved", and code mode is on.
const AGENT = `name: e2e
description: Drives the web conversation's end-to-end test.
instructions: Follow the script.
tools: [read, read_image, edit, bash, question]
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
  - say: "And the screenshot."
    calls:
      - tool: read_image
        args: {path: shot.png}
  - calls:
      - tool: question
        args:
          questions:
            - {id: colour, question: "Which colour should the report use?", options: [red, blue]}
  - calls:
      - tool: run_code
        args:
          code: |
            print(sdk.tool.call("bash", {"command": "echo approved"}))
  - say: "All done: the report will be **blue**."
`;

// An 8 × 6 PNG, red.
const SHOT_PNG =
  'iVBORw0KGgoAAAANSUhEUgAAAAgAAAAGCAIAAABxZ0isAAAAEUlEQVR4nGM4YaOBFTEMpAQAmkY4QXj/pr4AAAAASUVORK5CYII=';

let server: QilinServer;

test.beforeAll(async () => {
  server = await startScriptedServer(AGENT, SCRIPT, {
    'notes.md': '# Notes\n\nSome notes.\n',
    'shot.png': Buffer.from(SHOT_PNG, 'base64'),
  });
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
}) => {
  await page.goto(server.url);
  // The token left the address bar once traded for the cookie.
  await expect(page).not.toHaveURL(/token=/);
  await page.getByRole('button', { name: 'New session' }).click();
  await expect(page).toHaveURL(/\/sessions\//);
  await expect(page.getByText('scripted:script.yaml').first()).toBeVisible();
  await axe(page);
  await screenshot(page, 'empty-session');

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
  await expect(page.locator('.qp-markdown strong', { hasText: 'look' })).toBeVisible();
  await expect(
    page.locator('[data-chat-call-id="call_1"] .qt-card[data-state="running"]'),
  ).toBeVisible();
  await screenshot(page, 'turn-running');
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
  await screenshot(page, 'nested-calls');

  // Inspect opens the run_code call's trajectory; its nested call opens in turn; Escape closes
  // the panel and gives focus back to the button that opened it.
  const inspectCode = page.getByRole('button', { name: 'Inspect the call call_3', exact: true });
  await inspectCode.click();
  let trajectory = page.getByRole('complementary', { name: /Trajectory of run_code/ });
  await expect(trajectory.getByRole('region', { name: 'Arguments' })).toContainText('notes.md');
  await expect(trajectory.getByRole('region', { name: 'Position' })).toContainText(
    'call 1 of 1 in its step',
  );
  await expect(trajectory.getByRole('region', { name: 'Result' })).toContainText('characters');
  await expect(trajectory.getByRole('region', { name: 'Timing' })).toContainText(/\d+(\.\d+)? m?s/);
  await trajectory.getByRole('button', { name: /^read/ }).click();
  trajectory = page.getByRole('complementary', { name: /Trajectory of read/ });
  await expect(trajectory).toContainText('call 1 of 1 made by run_code');
  await expect(trajectory).toContainText('called from code');
  await screenshot(page, 'trajectory');
  await axe(page);
  await page.keyboard.press('Escape');
  await expect(page.getByRole('complementary')).toHaveCount(0);
  await expect(inspectCode).toBeFocused();

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
  await screenshot(page, 'file-sidebar');
  await preview.getByRole('button', { name: 'Close the preview' }).click();
  await expect(preview).toHaveCount(0);

  // The image read shows the workspace file, from the server's image route, with its size.
  await page.getByRole('button', { name: /Read image.*shot\.png/ }).click();
  const shot = page.getByRole('img', { name: 'shot.png, 8 × 6' });
  await expect(shot).toBeVisible();
  await expect(shot).toHaveAttribute('src', /^blob:/);
  expect(await shot.evaluate((img: HTMLImageElement) => img.naturalWidth)).toBe(8);
  await screenshot(page, 'image');

  // The question waits; a reload mid-turn shows the same page, the request still answerable.
  const question = page.locator('.qc-request[data-request-state="open"]');
  await expect(question).toBeVisible();
  const states = await callStates(page);
  expect(states.call_1).toEqual(['preparing', 'running', 'ok']);
  await screenshot(page, 'question');
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

  // The approval of the bash call the code made waits under that nested call, not under
  // run_code; it is answered from the second page and the first sees it.
  const approval = second
    .getByRole('list', { name: 'Calls made by run_code' })
    .locator('[data-chat-call-id] .qc-request[data-request-state="open"]');
  await expect(approval).toContainText('Approval needed: bash');
  await screenshot(second, 'approval');
  await approval.getByRole('button', { name: 'Allow once' }).click();
  await expect(page.locator('.qc-request[data-request-state="approved"]')).toBeVisible();

  // The turn ends with its reason and usage, once, on both pages.
  for (const each of [page, second]) {
    await expect(each.getByText('Turn completed')).toHaveCount(1);
    await expect(each.getByText(/cached tokens/)).toBeVisible();
    await expect(each.locator('.qp-markdown strong', { hasText: 'blue' })).toBeVisible();
  }
  await expect(page.getByRole('button', { name: 'Send' })).toBeDisabled(); // empty prompt
  await screenshot(page, 'turn-done');
  await axe(page);

  // Switch the language and the theme at run time.
  await page.getByRole('combobox', { name: 'Language' }).selectOption('zh-CN');
  await expect(page.getByText('本轮完成')).toBeVisible();
  await expect(page.locator('html')).toHaveAttribute('lang', 'zh-CN');
  await screenshot(page, 'zh-CN');
  await page.getByRole('combobox', { name: '主题' }).selectOption('dark');
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
  await screenshot(page, 'dark');
  await axe(page);
  await page.getByRole('combobox', { name: '语言' }).selectOption('en');
  await second.close();

  // The image file is gone: the card says so and shows the copy recorded with the call.
  rmSync(join(server.workspace, 'shot.png'));
  await page.reload();
  await page.getByRole('button', { name: /Read image.*shot\.png/ }).click();
  await expect(page.locator('.qp-gallery__fallback')).toContainText(
    'the file could not be loaded (`shot.png` does not exist in the workspace)',
  );
  await expect(page.getByRole('img', { name: 'shot.png, 8 × 6' })).toHaveAttribute(
    'src',
    /^data:image\/png;base64,/,
  );
});
