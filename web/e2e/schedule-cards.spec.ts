// The scheduled-task cards in the gallery: every state, light and dark, English and Chinese,
// each expanded, screenshotted and checked by axe-core; and the list at a phone's width.
import AxeBuilder from '@axe-core/playwright';
import { expect, test } from '@playwright/test';

for (const locale of ['en', 'zh-CN'] as const) {
  for (const theme of ['light', 'dark'] as const) {
    test(`scheduled-task cards (${locale}, ${theme})`, async ({ page }, testInfo) => {
      await page.emulateMedia({ reducedMotion: 'reduce' });
      await page.goto(`/index.html?lang=${locale}&theme=${theme}#log-schedules`);
      const section = page.locator('#log-schedules');
      const cases = section.locator('[data-gallery-case]');
      await expect(cases.first()).toBeVisible();
      const ids = await cases.evaluateAll((elements) =>
        (elements as HTMLElement[]).map((element) => element.dataset.galleryCase ?? ''),
      );
      for (const tool of ['schedule_create', 'schedule_list', 'schedule_delete']) {
        expect(
          ids.filter((id) => id.startsWith(`handmade/schedules/${tool}-`)).length,
        ).toBeGreaterThan(1);
      }
      const folder = testInfo.outputPath('schedule-cards', `${locale}-${theme}`);
      for (const id of ids) {
        const entry = section.locator(`[data-gallery-case="${id}"]`);
        const name = id.replace(/[^A-Za-z0-9_.-]/g, '-');
        await entry.scrollIntoViewIfNeeded();
        await entry.screenshot({ path: `${folder}/${name}.png` });
        const toggle = entry.locator('button.qp-row__main').first();
        if ((await toggle.count()) === 1) {
          await toggle.click();
          await expect(toggle).toHaveAttribute('aria-expanded', 'true');
          await entry.screenshot({ path: `${folder}/${name}-expanded.png` });
        }
      }
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
      const scheme = await page.evaluate(
        () => getComputedStyle(document.documentElement).colorScheme,
      );
      expect(scheme).toContain(theme);
      const checked = await new AxeBuilder({ page }).include('#log-schedules').analyze();
      expect(checked.violations).toEqual([]);
    });
  }
}

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
