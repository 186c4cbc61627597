// The workflow and loop cards in the gallery: every state, light and dark, English and Chinese,
// each expanded, screenshotted and checked by axe-core.
import AxeBuilder from '@axe-core/playwright';
import { expect, test, type Locator, type Page, type TestInfo } from '@playwright/test';

/** Screenshots every case of `family`, closed and expanded; returns the cases' ids. */
async function everyCase(
  page: Page,
  family: string,
  folder: string,
): Promise<{ section: Locator; ids: string[] }> {
  const section = page.locator(`#log-${family}`);
  const cases = section.locator('[data-gallery-case]');
  await expect(cases.first()).toBeVisible();
  const ids = await cases.evaluateAll((elements) =>
    (elements as HTMLElement[]).map((element) => element.dataset.galleryCase ?? ''),
  );
  for (const id of ids) {
    const entry = section.locator(`[data-gallery-case="${id}"]`);
    const name = id.replace(/[^A-Za-z0-9_.-]/g, '-');
    await entry.scrollIntoViewIfNeeded();
    await entry.screenshot({ path: `${folder}/${name}.png` });
    const toggle = entry.locator('button.qp-row__main').first();
    if ((await toggle.count()) === 1) {
      await toggle.click();
      await expect(toggle).toHaveAttribute('aria-expanded', 'true');
      for (const details of await entry.locator('details.qt-loop-files').all()) {
        await details.locator('summary').click();
      }
      await entry.screenshot({ path: `${folder}/${name}-expanded.png` });
    }
  }
  return { section, ids };
}

async function axeClean(page: Page, selector: string): Promise<void> {
  const checked = await new AxeBuilder({ page }).include(selector).analyze();
  expect(checked.violations).toEqual([]);
}

function folderOf(testInfo: TestInfo, locale: string, theme: string): string {
  return testInfo.outputPath('flow-cards', `${locale}-${theme}`);
}

for (const locale of ['en', 'zh-CN'] as const) {
  for (const theme of ['light', 'dark'] as const) {
    test(`workflow cards (${locale}, ${theme})`, async ({ page }, testInfo) => {
      await page.emulateMedia({ reducedMotion: 'reduce' });
      await page.goto(`/index.html?lang=${locale}&theme=${theme}#log-workflows`);
      const { section, ids } = await everyCase(
        page,
        'workflows',
        folderOf(testInfo, locale, theme),
      );
      for (const tool of ['workflow_run', 'workflow_status', 'workflow_stop']) {
        expect(ids.some((id) => id.startsWith(`handmade/workflows/${tool}-`))).toBe(true);
      }
      // The completed run: steps in order, the report section, the agents nested under it.
      const done = section.locator(
        '[data-gallery-case="handmade/workflows/workflow_run-completed"]',
      );
      await expect(done.locator('li.qt-workflow-step')).toHaveCount(4);
      await expect(done.locator('li.qt-workflow-step[data-kind="report"] h5')).toBeVisible();
      await expect(done.locator('.qt-call__children > li')).toHaveCount(3);
      // A replayed step is marked; a failed run has its capsule and error.
      const replayed = section.locator(
        '[data-gallery-case="handmade/workflows/workflow_run-replayed"]',
      );
      await expect(replayed.locator('.qt-workflow-step__replayed')).toHaveCount(2);
      const failed = section.locator(
        '[data-gallery-case="handmade/workflows/workflow_run-failed"]',
      );
      await expect(failed.locator('.qp-capsule')).toBeVisible();
      // Data of another shape keeps the generic card, and Inspect.
      const malformed = section.locator(
        '[data-gallery-case="handmade/workflows/workflow_run-malformed"]',
      );
      await expect(malformed.locator('.qp-row__title')).toContainText('workflow_run');
      await malformed.locator('.qp-action').last().click();
      await expect(page.locator('.gallery__host')).toHaveText('Host: inspect("call_w8")');
      const scheme = await page.evaluate(
        () => getComputedStyle(document.documentElement).colorScheme,
      );
      expect(scheme).toContain(theme);
      await axeClean(page, '#log-workflows');
    });

    test(`loop cards (${locale}, ${theme})`, async ({ page }, testInfo) => {
      await page.emulateMedia({ reducedMotion: 'reduce' });
      await page.goto(`/index.html?lang=${locale}&theme=${theme}#log-loops`);
      const { section, ids } = await everyCase(page, 'loops', folderOf(testInfo, locale, theme));
      for (const tool of ['loop_start', 'loop_status', 'loop_stop']) {
        expect(ids.some((id) => id.startsWith(`handmade/loops/${tool}-`))).toBe(true);
      }
      // Passed on the third iteration: three rows, the verdict after them.
      const passed = section.locator('[data-gallery-case="handmade/loops/loop_start-passed"]');
      const rows = passed.locator('.qt-loop-card__live li.qt-loop-iteration');
      await expect(rows).toHaveCount(3);
      await expect(rows.nth(2)).toHaveAttribute('data-status', 'finished');
      await expect(passed.locator('.qt-loop__verdict[data-reason="checks_passed"]')).toHaveCount(2);
      // Running: the second iteration runs, the row sweeps.
      const running = section.locator('[data-gallery-case="handmade/loops/loop_start-running"]');
      await expect(running.locator('li.qt-loop-iteration[data-status="running"]')).toHaveCount(1);
      await expect(running.locator('.qt-card').first()).toHaveAttribute('data-state', 'running');
      // Stalled, the iteration limit, the budget, stopped mid-iteration: each says why.
      for (const [id, reason] of [
        ['loop_start-stalled', 'stalled'],
        ['loop_start-max-iterations', 'max_iterations'],
        ['loop_start-budget', 'budget'],
        ['loop_stop-mid-iteration', 'stopped'],
      ]) {
        const entry = section.locator(`[data-gallery-case="handmade/loops/${id}"]`);
        await expect(
          entry.locator(`.qt-loop__verdict[data-reason="${reason}"]`).first(),
        ).toBeVisible();
      }
      const stopped = section.locator(
        '[data-gallery-case="handmade/loops/loop_stop-mid-iteration"]',
      );
      await expect(stopped.locator('li.qt-loop-iteration[data-status="interrupted"]')).toHaveCount(
        1,
      );
      // An iteration's session link.
      await expect(
        passed.locator('.qt-loop-card__live a[href="/sessions/ses_loop_it3"]'),
      ).toBeVisible();
      await axeClean(page, '#log-loops');
    });
  }
}
