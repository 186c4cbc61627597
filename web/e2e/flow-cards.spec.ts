// The workflow and loop cards in the gallery: every state, light and dark, English and Chinese,
// each expanded, screenshotted and checked by axe-core.
import { expect, type Locator } from '@playwright/test';
import {
  expectAccessible,
  expectThemedAndAccessible,
  expectToolsShown,
  openAllDetails,
  openFamily,
  screenshotEveryCase,
  testEachVariant,
  variantFolder,
  type Variant,
} from './support/gallery';

/** Opens `family`'s section and screenshots every case, its changed files opened too. */
async function everyCase(
  variant: Variant,
  family: string,
): Promise<{ section: Locator; ids: string[] }> {
  const { section, ids } = await openFamily(variant, family);
  await screenshotEveryCase(section, ids, variantFolder(variant, 'flow-cards'), (entry) =>
    openAllDetails(entry, 'details.qt-loop-files'),
  );
  return { section, ids };
}

testEachVariant('workflow cards', async (variant) => {
  const { page } = variant;
  const { section, ids } = await everyCase(variant, 'workflows');
  expectToolsShown(ids, 'workflows', ['workflow_run', 'workflow_status', 'workflow_stop'], 0);
  // The completed run: steps in order, the report section, the agents nested under it.
  const done = section.locator('[data-gallery-case="handmade/workflows/workflow_run-completed"]');
  await expect(done.locator('li.qt-workflow-step')).toHaveCount(4);
  await expect(done.locator('li.qt-workflow-step[data-kind="report"] h5')).toBeVisible();
  await expect(done.locator('.qt-call__children > li')).toHaveCount(3);
  // A replayed step is marked; a failed run has its capsule and error.
  const replayed = section.locator(
    '[data-gallery-case="handmade/workflows/workflow_run-replayed"]',
  );
  await expect(replayed.locator('.qt-workflow-step__replayed')).toHaveCount(2);
  const failed = section.locator('[data-gallery-case="handmade/workflows/workflow_run-failed"]');
  await expect(failed.locator('.qp-capsule')).toBeVisible();
  // Data of another shape keeps the generic card, and Inspect.
  const malformed = section.locator(
    '[data-gallery-case="handmade/workflows/workflow_run-malformed"]',
  );
  await expect(malformed.locator('.qp-row__title')).toContainText('workflow_run');
  await malformed.locator('.qp-action').last().click();
  await expect(page.locator('.gallery__host')).toHaveText('Host: inspect("call_w8")');
  await expectThemedAndAccessible(variant, '#log-workflows');
});

testEachVariant('loop cards', async (variant) => {
  const { page } = variant;
  const { section, ids } = await everyCase(variant, 'loops');
  expectToolsShown(ids, 'loops', ['loop_start', 'loop_status', 'loop_stop'], 0);
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
    await expect(entry.locator(`.qt-loop__verdict[data-reason="${reason}"]`).first()).toBeVisible();
  }
  const stopped = section.locator('[data-gallery-case="handmade/loops/loop_stop-mid-iteration"]');
  await expect(stopped.locator('li.qt-loop-iteration[data-status="interrupted"]')).toHaveCount(1);
  // An iteration's session link.
  await expect(
    passed.locator('.qt-loop-card__live a[href="/sessions/ses_loop_it3"]'),
  ).toBeVisible();
  await expectAccessible(page, '#log-loops');
});
