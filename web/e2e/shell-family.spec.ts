// The shell family's cards of the recorded `shell` and `terminals` sessions, in the gallery,
// light and dark, en and zh-CN: each state shot collapsed and opened, each checked for what
// makes it that state (the row's state, its words, what the details hold and must not hold),
// and axe-core over both logs.
import AxeBuilder from '@axe-core/playwright';
import { expect, test, type Locator, type Page } from '@playwright/test';

type Lang = 'en' | 'zh-CN';

/** One state of one card, as the gallery shows it. */
interface ShellState {
  /** The screenshot's name. */
  name: string;
  /** The gallery case: `fixture/callId/phase`. */
  id: string;
  /** The call whose card it is (a nested call for a case of its root). */
  callId: string;
  /** The card's state (`data-state`): `receipt` shows no dot at all. */
  state: 'running' | 'ok' | 'error' | 'receipt';
  /** What the collapsed row says, by locale. */
  row: Record<Lang, string>;
  /** What the opened details hold (a selector); absent for a card with none. */
  details?: string;
  /** What the opened card must not show. */
  absent?: RegExp;
}

/** `text` in both locales. */
const both = (text: string): Record<Lang, string> => ({ en: text, 'zh-CN': text });

/** A card that fell back to the generic row, by locale. */
const generic = (tool: string): Record<Lang, string> => ({
  en: `Tool call · ${tool}`,
  'zh-CN': `工具调用 · ${tool}`,
});

/** What an opened card that shows the plain text the model saw holds. */
const PLAIN = '.qt-block';

const STATES: readonly ShellState[] = [
  {
    name: 'bash-running',
    id: 'shell/call_1/running',
    callId: 'call_1',
    state: 'running',
    row: both('Shell · printf'),
    details: '.qp-terminal',
  },
  {
    name: 'bash-done',
    id: 'shell/call_1/done',
    callId: 'call_1',
    state: 'ok',
    row: both('Shell · printf'),
    details: '.qp-terminal',
  },
  {
    name: 'bash-exit',
    id: 'shell/call_2/done',
    callId: 'call_2',
    state: 'ok',
    row: { en: 'exit 1', 'zh-CN': '退出码 1' },
    details: '.qp-terminal',
  },
  {
    name: 'bash-signal',
    id: 'shell/call_3/done',
    callId: 'call_3',
    state: 'ok',
    row: { en: 'killed by SIGTERM', 'zh-CN': '被 SIGTERM 终止' },
    details: '.qp-terminal',
  },
  {
    name: 'bash-timed-out',
    id: 'shell/call_4/done',
    callId: 'call_4',
    state: 'ok',
    row: { en: 'timed out', 'zh-CN': '已超时' },
    details: '.qp-terminal',
  },
  {
    name: 'bash-spilled',
    id: 'shell/call_5/done',
    callId: 'call_5',
    state: 'ok',
    row: both('Shell · seq 1 30000'),
    details: PLAIN,
    absent: /exit \d/,
  },
  {
    name: 'bash-failed',
    id: 'shell/call_6/done',
    callId: 'call_6',
    state: 'error',
    row: generic('bash'),
    details: PLAIN,
  },
  {
    name: 'start-receipt',
    id: 'shell/call_8/done',
    callId: 'call_8',
    state: 'receipt',
    row: { en: 'background', 'zh-CN': '后台' },
    details: '.qt-receipt',
    absent: /tick 1/,
  },
  {
    name: 'start-failed',
    id: 'shell/call_20/done',
    callId: 'call_20',
    state: 'error',
    row: generic('bash'),
    details: PLAIN,
  },
  {
    name: 'job-output',
    id: 'shell/call_9/done',
    callId: 'call_9',
    state: 'receipt',
    row: { en: 'exited with code 0', 'zh-CN': '以退出码 0 结束' },
    details: '.qt-job-state',
  },
  {
    name: 'job-output-exit',
    id: 'shell/call_16/done',
    callId: 'call_16',
    state: 'receipt',
    row: { en: 'exit 4', 'zh-CN': '退出码 4' },
    details: '.qt-job-state .qp-dot--error',
  },
  {
    name: 'job-output-still-running',
    id: 'shell/call_17/done',
    callId: 'call_17',
    state: 'receipt',
    row: { en: 'still running', 'zh-CN': '仍在运行' },
    details: '.qt-job-state .qp-dot--running',
  },
  {
    name: 'job-output-failed',
    id: 'shell/call_12/done',
    callId: 'call_12',
    state: 'error',
    row: generic('job_output'),
    details: PLAIN,
  },
  {
    name: 'job-interrupt-receipt',
    id: 'shell/call_11/done',
    callId: 'call_11',
    state: 'receipt',
    row: { en: 'Stop job · job-2', 'zh-CN': '停止任务 · job-2' },
    details: '.qt-verdict',
    absent: /SIG|exit/,
  },
  {
    name: 'job-interrupt-failed',
    id: 'shell/call_19/done',
    callId: 'call_19',
    state: 'error',
    row: generic('job_kill'),
    details: PLAIN,
  },
  {
    name: 'persistent-running',
    id: 'terminals/call_1/running',
    callId: 'call_1',
    state: 'running',
    row: { en: 'persistent shell default', 'zh-CN': '持久 shell default' },
    details: '.qp-terminal',
  },
  {
    name: 'persistent-finished',
    id: 'terminals/call_2/done',
    callId: 'call_2',
    state: 'ok',
    row: generic('bash'),
    details: PLAIN,
    absent: /exit \d/,
  },
  {
    name: 'persistent-partial',
    id: 'terminals/call_3/done',
    callId: 'call_3',
    state: 'ok',
    row: generic('bash'),
    details: PLAIN,
  },
  {
    name: 'persistent-spilled',
    id: 'terminals/call_4/done',
    callId: 'call_4',
    state: 'ok',
    row: generic('bash'),
    details: PLAIN,
  },
  {
    name: 'persistent-reset',
    id: 'terminals/call_5/done',
    callId: 'call_5',
    state: 'ok',
    row: generic('bash'),
    details: PLAIN,
  },
  {
    name: 'terminal-start-running',
    id: 'terminals/call_6/running',
    callId: 'call_6',
    state: 'running',
    row: both('cat'),
    details: '.qp-terminal',
  },
  {
    name: 'terminal-start-done',
    id: 'terminals/call_6/done',
    callId: 'call_6',
    state: 'ok',
    row: both('cat'),
    details: '.qp-terminal',
  },
  {
    name: 'terminal-exit',
    id: 'terminals/call_16/done',
    callId: 'call_16',
    state: 'ok',
    row: { en: 'exit 3', 'zh-CN': '退出码 3' },
    details: '.qp-terminal',
  },
  {
    name: 'terminal-start-spilled',
    id: 'terminals/call_10/done',
    callId: 'call_10',
    state: 'ok',
    row: both('seq 1 30000; cat'),
    details: PLAIN,
  },
  {
    name: 'terminal-start-failed',
    id: 'terminals/call_19/done',
    callId: 'call_19',
    state: 'error',
    row: { en: 'Terminal · cat', 'zh-CN': '终端 · cat' },
    details: PLAIN,
  },
  {
    name: 'terminal-send',
    id: 'terminals/call_7/done',
    callId: 'call_7',
    state: 'ok',
    row: { en: 'Terminal input · hello ⏎', 'zh-CN': '终端输入 · hello ⏎' },
    details: '.qp-terminal',
  },
  {
    name: 'terminal-send-nested',
    id: 'terminals/call_8.1/done',
    callId: 'call_8.1',
    state: 'ok',
    row: { en: 'Terminal input · nested ⏎', 'zh-CN': '终端输入 · nested ⏎' },
    details: '.qp-terminal',
  },
  {
    name: 'terminal-send-spilled',
    id: 'terminals/call_18/done',
    callId: 'call_18',
    state: 'ok',
    row: { en: 'Terminal input · seq 1 30000 ⏎', 'zh-CN': '终端输入 · seq 1 30000 ⏎' },
    details: PLAIN,
  },
  {
    name: 'terminal-send-failed',
    id: 'terminals/call_9/done',
    callId: 'call_9',
    state: 'error',
    row: { en: 'Terminal input', 'zh-CN': '终端输入' },
    details: PLAIN,
  },
  {
    name: 'terminal-list',
    id: 'terminals/call_13/done',
    callId: 'call_13',
    state: 'ok',
    row: { en: 'Terminals', 'zh-CN': '终端列表' },
    details: 'table.qt-table',
  },
  {
    name: 'terminal-interrupt-receipt',
    id: 'terminals/call_14/done',
    callId: 'call_14',
    state: 'receipt',
    row: { en: 'Stop terminal · term-1', 'zh-CN': '停止终端 · term-1' },
    details: '.qt-verdict',
    absent: /SIG|exit/,
  },
  {
    name: 'terminal-interrupt-failed',
    id: 'terminals/call_15/done',
    callId: 'call_15',
    state: 'error',
    row: generic('terminal_kill'),
    details: PLAIN,
  },
];

/** The row toggle of `callId` itself (not of a call nested under it). */
function toggleOf(scope: Locator | Page, callId: string): Locator {
  return scope.locator(
    `[data-chat-call-id="${callId}"] > .qt-card > .qp-row > button.qp-row__main`,
  );
}

for (const lang of ['en', 'zh-CN'] as const) {
  for (const colorScheme of ['light', 'dark'] as const) {
    test(`the shell family's cards in every state, ${lang}, ${colorScheme}`, async ({
      page,
    }, testInfo) => {
      test.setTimeout(300_000);
      await page.emulateMedia({ colorScheme, reducedMotion: 'reduce' });
      await page.goto(`/index.html?lang=${lang}&theme=${colorScheme}`);
      const folder = testInfo.outputPath('shell-family', `${lang}-${colorScheme}`);
      for (const state of STATES) {
        const entry = page.locator(`[data-gallery-case="${state.id}"]`);
        await entry.scrollIntoViewIfNeeded();
        const root = state.callId.split('.')[0] as string;
        if (root !== state.callId) await toggleOf(entry, root).click();
        const wrapper = entry.locator(`[data-chat-call-id="${state.callId}"]`);
        const card = wrapper.locator(':scope > .qt-card');
        const row = card.locator(':scope > .qp-row');
        await expect(card, state.name).toHaveAttribute('data-state', state.state);
        await expect(row, state.name).toContainText(state.row[lang]);
        // A receipt names no execution state: no dot is announced.
        await expect(row.locator('.qp-dot[role="img"]'), state.name).toHaveCount(
          state.state === 'receipt' ? 0 : 1,
        );
        await entry.screenshot({ path: `${folder}/${state.name}.png` });
        if (state.details === undefined) continue;
        await toggleOf(entry, state.callId).click();
        const details = card.locator(':scope > .qt-card__details');
        await expect(details.locator(state.details).first(), state.name).toBeVisible();
        if (state.absent !== undefined) {
          await expect(details, state.name).not.toContainText(state.absent);
        }
        await entry.screenshot({ path: `${folder}/${state.name}-expanded.png` });
        await toggleOf(entry, state.callId).click();
      }
      for (const log of ['#log-shell', '#log-terminals']) {
        const found = await new AxeBuilder({ page }).include(log).analyze();
        expect(found.violations, log).toEqual([]);
      }
    });
  }
}
