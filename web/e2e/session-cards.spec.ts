// The session query cards in the gallery: light and dark, English and Chinese, each opened,
// screenshotted and checked by axe-core.
import { expect } from '@playwright/test';
import { expectThemedAndAccessible, testEachVariant } from './support/gallery';

const CARDS = ['session_search', 'session_events', 'session_trajectory'] as const;

testEachVariant('session query cards', async (variant) => {
  const { page, testInfo, locale, theme } = variant;
  await page.goto(`/index.html?lang=${locale}&theme=${theme}`);
  const section = page.locator('#log-session-queries-shapes');
  await expect(section.locator('[data-gallery-case]')).toHaveCount(CARDS.length);
  for (const tool of CARDS) {
    const entry = section.locator(`[data-gallery-case="handmade/${tool}"]`);
    await entry.locator('button.qp-row__main').first().click();
    await expect(entry.locator('.qt-card__details')).toBeVisible();
    await entry.screenshot({
      path: testInfo.outputPath('screenshots', `${tool}-${locale}-${theme}.png`),
    });
  }
  // The search: each match highlighted, each hit a link to its place.
  const search = section.locator('[data-gallery-case="handmade/session_search"]');
  await expect(search.locator('mark')).toHaveText(['RETRY', 'backoff', 'retry', 'back off']);
  await expect(search.getByRole('link').first()).toHaveAttribute(
    'href',
    '/sessions/ses_7f3a?at=call:call_4',
  );
  // The trajectory: the nested read two levels in, further right than run_code.
  const trajectory = section.locator('[data-gallery-case="handmade/session_trajectory"]');
  const left = async (depth: number) =>
    (
      await trajectory
        .locator(`[data-depth="${depth}"] > .qt-trajectory__line`)
        .first()
        .boundingBox()
    )?.x ?? 0;
  expect(await left(1)).toBeGreaterThan(await left(0));
  expect(await left(2)).toBeGreaterThan(await left(1));
  expect(await left(3)).toBeGreaterThan(await left(2));
  await expectThemedAndAccessible(variant, '#log-session-queries-shapes');
});
