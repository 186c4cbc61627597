// The checks and goal cards in the gallery: every state, light and dark, English and Chinese,
// each expanded, screenshotted and checked by axe-core.
import { expect } from '@playwright/test';
import {
  expectThemedAndAccessible,
  expectToolsShown,
  openAllDetails,
  openFamily,
  screenshotEveryCase,
  testEachVariant,
  variantFolder,
} from './support/gallery';

testEachVariant('checks and goal cards', async (variant) => {
  const { page } = variant;
  const { section, ids } = await openFamily(variant, 'goals');
  expectToolsShown(ids, 'goals', ['checks_run', 'goal_create', 'goal_get', 'goal_update'], 1);
  // Every check's details open too: annotations, output, the spilled file.
  await screenshotEveryCase(section, ids, variantFolder(variant, 'goal-cards'), (entry) =>
    openAllDetails(entry, 'details.qt-check__details'),
  );
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
  const malformed = section.locator('[data-gallery-case="handmade/goals/checks_run-malformed"]');
  await expect(malformed.locator('.qp-row__title')).toContainText('checks_run');
  const refused = section.locator('[data-gallery-case="handmade/goals/goal_update-refused"]');
  await expect(refused.locator('.qp-capsule')).toBeVisible();
  await expect(refused.locator('[aria-label*="Failing"], [aria-label*="未通过"]')).toBeVisible();
  // Meters for the budget.
  const active = section.locator('[data-gallery-case="handmade/goals/goal_get-active"]');
  await expect(active.locator('meter')).toHaveCount(3);
  await expectThemedAndAccessible(variant, '#log-goals');
});
