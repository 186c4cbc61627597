// The agent family's cards in the gallery: every state, light and dark, English and Chinese,
// each expanded, screenshotted and checked by axe-core.
import AxeBuilder from '@axe-core/playwright';
import { expect, test } from '@playwright/test';

for (const locale of ['en', 'zh-CN'] as const) {
  for (const theme of ['light', 'dark'] as const) {
    test(`agent family cards (${locale}, ${theme})`, async ({ page }, testInfo) => {
      await page.emulateMedia({ reducedMotion: 'reduce' });
      await page.goto(`/index.html?lang=${locale}&theme=${theme}#log-agents`);
      const section = page.locator('#log-agents');
      const cases = section.locator('[data-gallery-case]');
      await expect(cases.first()).toBeVisible();
      const ids = await cases.evaluateAll((elements) =>
        (elements as HTMLElement[]).map((element) => element.dataset.galleryCase ?? ''),
      );
      // Each tool of the family in several states.
      for (const tool of ['agent', 'agent_wait', 'agent_list', 'agent_stop', 'agent_send']) {
        expect(
          ids.filter((id) => id.startsWith(`handmade/agents/${tool}-`)).length,
        ).toBeGreaterThan(1);
      }
      for (const id of ids) {
        const entry = section.locator(`[data-gallery-case="${id}"]`);
        const name = id.replace(/[^A-Za-z0-9_.-]/g, '-');
        const folder = testInfo.outputPath('agent-cards', `${locale}-${theme}`);
        await entry.scrollIntoViewIfNeeded();
        await entry.screenshot({ path: `${folder}/${name}.png` });
        const toggle = entry.locator('button.qp-row__main').first();
        if ((await toggle.count()) === 1) {
          await toggle.click();
          await expect(toggle).toHaveAttribute('aria-expanded', 'true');
          await entry.screenshot({ path: `${folder}/${name}-expanded.png` });
        }
      }
      // A running agent shows its child's latest calls, each its own card; the rest on demand.
      const running = section.locator('[data-gallery-case="handmade/agents/agent-running"]');
      const childCalls = running.locator('[data-child-session="ses_child1"]');
      const roots = childCalls.locator('.qt-child-calls__call > .qt-tree > .qt-call');
      await expect(roots).toHaveCount(3);
      await childCalls.locator('.qt-child-calls__body > button').first().click();
      expect(await roots.count()).toBeGreaterThan(3);
      await running.screenshot({
        path: testInfo.outputPath('agent-cards', `${locale}-${theme}`, 'child-calls-all.png'),
      });
      // The child's session opens from the card; a background start is a receipt.
      const completed = section.locator('[data-gallery-case="handmade/agents/agent-completed"]');
      await expect(completed.locator('a.qt-child-link')).toHaveAttribute(
        'href',
        '/sessions/ses_child1',
      );
      const background = section.locator('[data-gallery-case="handmade/agents/agent-background"]');
      await expect(background.locator('.qp-row').first()).toHaveAttribute('data-state', 'receipt');
      const scheme = await page.evaluate(
        () => getComputedStyle(document.documentElement).colorScheme,
      );
      expect(scheme).toContain(theme);
      const checked = await new AxeBuilder({ page }).include('#log-agents').analyze();
      expect(checked.violations).toEqual([]);
    });
  }
}
