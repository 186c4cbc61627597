// The denial cards of the recorded review session, in the gallery, light and dark, en and
// zh-CN: the reason recorded for the person shown on one line (trimmed, line breaks folded into
// spaces), the localised fallback when none was recorded, direct and nested under run_code.
import AxeBuilder from '@axe-core/playwright';
import { expect, test, type Locator, type Page } from '@playwright/test';

/** What each denied call of `review` shows once opened, by locale. */
const REASONS = {
  en: {
    call_1: 'Not run: deleting folders is not allowed in this workspace',
    call_3: 'Not run: the review policy did not allow this call',
    call_4: 'Not run: no network access from this agent ask the user',
    call_5: 'Not run: the review policy did not allow this call',
    'call_6.1': 'Not run: deleting folders is not allowed in this workspace',
  },
  'zh-CN': {
    call_1: '未执行：deleting folders is not allowed in this workspace',
    call_3: '未执行：审查策略不允许此次调用',
    call_4: '未执行：no network access from this agent ask the user',
    call_5: '未执行：审查策略不允许此次调用',
    'call_6.1': '未执行：deleting folders is not allowed in this workspace',
  },
} as const;

/** The row toggle of `callId` itself (not of a call nested under it). */
function toggleOf(scope: Locator | Page, callId: string): Locator {
  return scope.locator(
    `[data-chat-call-id="${callId}"] > .qt-card > .qp-row > button.qp-row__main`,
  );
}

for (const lang of ['en', 'zh-CN'] as const) {
  for (const colorScheme of ['light', 'dark'] as const) {
    test(`denial cards show the person's reason or the fallback, ${lang}, ${colorScheme}`, async ({
      page,
    }, testInfo) => {
      await page.emulateMedia({ colorScheme, reducedMotion: 'reduce' });
      await page.goto(`/index.html?lang=${lang}&theme=${colorScheme}`);
      const folder = testInfo.outputPath('denied', `${lang}-${colorScheme}`);
      for (const [callId, reason] of Object.entries(REASONS[lang])) {
        const root = callId.split('.')[0] as string;
        const entry = page.locator(`[data-gallery-case="review/${root}/done"]`);
        await entry.scrollIntoViewIfNeeded();
        if (root !== callId) await toggleOf(entry, root).click();
        const card = entry.locator(`[data-chat-call-id="${callId}"]`);
        await expect(card.locator('.qp-row').first()).toContainText(
          lang === 'en' ? 'Auto review' : '自动审查',
        );
        await entry.screenshot({ path: `${folder}/${callId}.png` });
        await toggleOf(entry, callId).click();
        await expect(card).toContainText(reason);
        await entry.screenshot({ path: `${folder}/${callId}-expanded.png` });
      }
      const review = await new AxeBuilder({ page }).include('#log-review').analyze();
      expect(review.violations).toEqual([]);
    });
  }
}
