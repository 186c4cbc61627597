// The scheduled-task cards in the gallery: every state, light and dark, English and Chinese,
// each expanded, screenshotted and checked by axe-core; and the list at a phone's width.
import { expect, test } from '@playwright/test';
import {
  expectThemedAndAccessible,
  expectToolsShown,
  openFamily,
  screenshotEveryCase,
  testEachVariant,
  variantFolder,
} from './support/gallery';

testEachVariant('scheduled-task cards', async (variant) => {
  const { section, ids } = await openFamily(variant, 'schedules');
  expectToolsShown(ids, 'schedules', ['schedule_create', 'schedule_list', 'schedule_delete'], 1);
  await screenshotEveryCase(section, ids, variantFolder(variant, 'schedule-cards'));
  // A created schedule: its three next fires, each a time, with the schedule's zone named.
  const cron = section.locator('[data-gallery-case="handmade/schedules/schedule_create-cron"]');
  await expect(cron.locator('.qt-schedule__fires time')).toHaveCount(3);
  await expect(cron.locator('.qt-schedule__fires time').first()).toHaveAttribute(
    'datetime',
    '2026-03-02T08:00:00Z',
  );
  await expect(cron.locator('code', { hasText: '0 9 * * 1-5' })).toBeVisible();
  // The list: one row per schedule, a run linking to the session its turn ran in.
  const list = section.locator('[data-gallery-case="handmade/schedules/schedule_list-three"]');
  await expect(list.locator('tbody tr')).toHaveCount(3);
  await expect(list.locator('a[href="/sessions/ses_run_7"]')).toBeVisible();
  await expect(list.locator('[data-outcome="failed"]')).toBeVisible();
  // Data of another shape keeps the generic card.
  for (const malformed of ['schedule_create-malformed', 'schedule_list-malformed']) {
    const entry = section.locator(`[data-gallery-case="handmade/schedules/${malformed}"]`);
    await expect(entry.locator('.qp-row__title')).toContainText('schedule_');
    await expect(entry.locator('.qt-schedule, .qt-schedule-table')).toHaveCount(0);
  }
  await expectThemedAndAccessible(variant, '#log-schedules');
});

test('the schedule list keeps to a phone’s width', async ({ page }) => {
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto('/index.html?lang=en#log-schedules');
  const list = page.locator('[data-gallery-case="handmade/schedules/schedule_list-three"]');
  await list.scrollIntoViewIfNeeded();
  await list.locator('button.qp-row__main').first().click();
  await expect(list.locator('tbody tr')).toHaveCount(3);
  const widths = await page.evaluate(() => ({
    page: document.documentElement.scrollWidth,
    viewport: window.innerWidth,
  }));
  expect(widths.page).toBeLessThanOrEqual(widths.viewport);
  const table = await list.locator('table').boundingBox();
  expect(table?.width ?? Infinity).toBeLessThanOrEqual(390);
});
