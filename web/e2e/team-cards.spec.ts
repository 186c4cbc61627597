// The teammates-and-tasks cards in the gallery: every state, light and dark, English and
// Chinese, each expanded, screenshotted and checked by axe-core; and the task table at a phone's
// width.
import { expect, test } from '@playwright/test';
import {
  expectThemedAndAccessible,
  expectToolsShown,
  openFamily,
  screenshotEveryCase,
  testEachVariant,
  variantFolder,
} from './support/gallery';

const WORDS = {
  en: { change: 'in progress → done', done: 'done since', added: 'added', idle: 'idle' },
  'zh-CN': { change: '进行中 → 已完成', done: '新完成', added: '新增', idle: '空闲' },
} as const;

testEachVariant('teammates and tasks cards', async (variant) => {
  const { locale } = variant;
  const words = WORDS[locale];
  const { section, ids } = await openFamily(variant, 'teams');
  expectToolsShown(ids, 'teams', ['task_create', 'task_update', 'task_list'], 2);
  await screenshotEveryCase(section, ids, variantFolder(variant, 'team-cards'));
  const at = (id: string) => section.locator(`[data-gallery-case="handmade/teams/${id}"]`);
  // An update: the status before → after on the row, and the note the call added.
  const done = at('task_update-done');
  await expect(done.locator('.qp-row').first()).toContainText(words.change);
  await expect(done.locator('.qt-task__note-text')).toContainText('src/upload.rs');
  // The later list is compared with the first: one task done since, one added, one changed.
  const compared = at('task_list-compared');
  await expect(compared.locator('tbody tr')).toHaveCount(4);
  await expect(compared.locator('tbody tr[data-mark="done"]')).toContainText(words.done);
  await expect(compared.locator('tbody tr[data-mark="added"]')).toContainText(words.added);
  await expect(compared.locator('tbody tr[data-mark="changed"]')).toHaveCount(1);
  await expect(at('task_list-first').locator('tbody tr[data-mark]')).toHaveCount(0);
  // Idle teammates: their own quiet state, not done.
  const team = at('agent_list-team');
  await expect(team.locator('tbody tr[data-status="idle"]')).toHaveCount(2);
  await expect(team.locator('tbody tr[data-status="idle"] .qp-dot--idle')).toHaveCount(2);
  await expect(team.locator('tbody tr[data-status="idle"]').first()).toContainText(words.idle);
  await expect(team.locator('tbody tr[data-status="idle"] .qp-dot--ok')).toHaveCount(0);
  // Data of another shape keeps the generic card.
  for (const malformed of [
    'task_create-malformed',
    'task_update-malformed',
    'task_list-malformed',
  ]) {
    await expect(at(malformed).locator('.qp-row__title')).toContainText('task_');
    await expect(at(malformed).locator('.qt-task, .qt-task-table')).toHaveCount(0);
  }
  await expectThemedAndAccessible(variant, '#log-teams');
});

test('the task table keeps to a phone’s width', async ({ page }) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto('/index.html?lang=en#log-teams');
  const list = page.locator('[data-gallery-case="handmade/teams/task_list-compared"]');
  await list.scrollIntoViewIfNeeded();
  await list.locator('button.qp-row__main').first().click();
  await expect(list.locator('tbody tr')).toHaveCount(4);
  const widths = await page.evaluate(() => ({
    page: document.documentElement.scrollWidth,
    viewport: window.innerWidth,
  }));
  expect(widths.page).toBeLessThanOrEqual(widths.viewport);
});
