import { expect, test } from '@playwright/test';

/** The tools of the shell family, whose cards are shot in every state. */
const SHELL_FAMILY = [
  'bash',
  'job_output',
  'job_kill',
  'terminal_start',
  'terminal_send',
  'terminal_kill',
  'terminal_list',
];

for (const lang of ['en', 'zh-CN'] as const) {
  for (const colorScheme of ['light', 'dark'] as const) {
    test(`the shell family's cards in every recorded state, ${lang}, ${colorScheme}`, async ({
      page,
    }, testInfo) => {
      test.setTimeout(600_000);
      await page.emulateMedia({ colorScheme, reducedMotion: 'reduce' });
      await page.goto(`/index.html?lang=${lang}`);
      await expect(page.locator('[data-gallery-case]').first()).toBeVisible();
      const cases = await page.$$eval(
        '[data-gallery-case]',
        (elements, family) =>
          (elements as HTMLElement[])
            .filter((element) => family.includes(element.dataset.tool ?? ''))
            .filter((element) => /^(shell|terminals)\//.test(element.dataset.galleryCase ?? ''))
            .map((element) => ({
              id: element.dataset.galleryCase ?? '',
              callId: element.dataset.callId ?? '',
            })),
        SHELL_FAMILY,
      );
      // Every tool of the family, recorded in the shell and terminals sessions.
      expect(cases.length).toBeGreaterThan(60);
      for (const { id, callId } of cases) {
        const entry = page.locator(`[data-gallery-case="${id}"]`);
        const name = id.replace(/[^A-Za-z0-9_.-]/g, '-');
        const folder = testInfo.outputPath('shell-family', `${lang}-${colorScheme}`);
        await entry.scrollIntoViewIfNeeded();
        await entry.screenshot({ path: `${folder}/${name}.png` });
        const toggle = entry
          .locator(`[data-chat-call-id="${callId}"] > .qt-card > .qp-row > button.qp-row__main`)
          .first();
        if ((await toggle.count()) === 1) {
          await toggle.click();
          await expect(toggle).toHaveAttribute('aria-expanded', 'true');
          await entry.screenshot({ path: `${folder}/${name}-expanded.png` });
          await toggle.click();
        }
      }
    });
  }
}
