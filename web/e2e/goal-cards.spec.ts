// The checks and goal cards in the gallery: every state, light and dark, English and Chinese,
// each expanded, screenshotted and checked by axe-core.
import AxeBuilder from '@axe-core/playwright';
import { expect, test } from '@playwright/test';

for (const locale of ['en', 'zh-CN'] as const) {
  for (const theme of ['light', 'dark'] as const) {
    test(`checks and goal cards (${locale}, ${theme})`, async ({ page }, testInfo) => {
      await page.emulateMedia({ reducedMotion: 'reduce' });
      await page.goto(`/index.html?lang=${locale}&theme=${theme}#log-goals`);
      const section = page.locator('#log-goals');
      const cases = section.locator('[data-gallery-case]');
      await expect(cases.first()).toBeVisible();
      const ids = await cases.evaluateAll((elements) =>
        (elements as HTMLElement[]).map((element) => element.dataset.galleryCase ?? ''),
      );
      for (const tool of ['checks_run', 'goal_create', 'goal_get', 'goal_update']) {
        expect(ids.filter((id) => id.startsWith(`handmade/goals/${tool}-`)).length).toBeGreaterThan(
          1,
        );
      }
      const folder = testInfo.outputPath('goal-cards', `${locale}-${theme}`);
      for (const id of ids) {
        const entry = section.locator(`[data-gallery-case="${id}"]`);
        const name = id.replace(/[^A-Za-z0-9_.-]/g, '-');
        await entry.scrollIntoViewIfNeeded();
        await entry.screenshot({ path: `${folder}/${name}.png` });
        const toggle = entry.locator('button.qp-row__main').first();
        if ((await toggle.count()) === 1) {
          await toggle.click();
          await expect(toggle).toHaveAttribute('aria-expanded', 'true');
          // Every check's details open too: annotations, output, the spilled file.
          for (const details of await entry.locator('details.qt-check__details').all()) {
            await details.locator('summary').click();
          }
          await entry.screenshot({ path: `${folder}/${name}-expanded.png` });
        }
      }
      // The receipt: one row per check, in order, the overall conclusion on the row.
      const failing = section.locator('[data-gallery-case="handmade/goals/checks_run-failure"]');
      await expect(failing.locator('li.qt-check')).toHaveCount(3);
      await expect(failing.locator('.qp-row [data-conclusion="failure"]').first()).toBeVisible();
      await expect(failing.locator('li[data-check="e2e"] [data-status="timed_out"]')).toBeVisible();
      await expect(failing.locator('li[data-check="lint"] .qt-check__cached')).toBeVisible();
      // An annotation opens its file at its line through the host.
      await failing.locator('li[data-check="test"] button.qt-annotation__place').first().click();
      await expect(page.locator('.gallery__host')).toHaveText('Host: openFile("src/upload.rs")');
      // Data of another shape keeps the generic card; a refusal is a capsule.
      const malformed = section.locator(
        '[data-gallery-case="handmade/goals/checks_run-malformed"]',
      );
      await expect(malformed.locator('.qp-row__title')).toContainText('checks_run');
      const refused = section.locator('[data-gallery-case="handmade/goals/goal_update-refused"]');
      await expect(refused.locator('.qp-capsule')).toBeVisible();
      await expect(
        refused.locator('[aria-label*="Failing"], [aria-label*="未通过"]'),
      ).toBeVisible();
      // Meters for the budget.
      const active = section.locator('[data-gallery-case="handmade/goals/goal_get-active"]');
      await expect(active.locator('meter')).toHaveCount(3);
      const scheme = await page.evaluate(
        () => getComputedStyle(document.documentElement).colorScheme,
      );
      expect(scheme).toContain(theme);
      const checked = await new AxeBuilder({ page }).include('#log-goals').analyze();
      expect(checked.violations).toEqual([]);
    });
  }
}
