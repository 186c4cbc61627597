// The code navigation cards in the gallery — every operation, every empty reason, non-file URIs,
// a hover, diagnostics and the diagnostics edit cards carry — light and dark, English and
// Chinese, each expanded, screenshotted and checked by axe-core.
import AxeBuilder from '@axe-core/playwright';
import { expect, test } from '@playwright/test';

for (const locale of ['en', 'zh-CN'] as const) {
  for (const theme of ['light', 'dark'] as const) {
    test(`code navigation cards (${locale}, ${theme})`, async ({ page }, testInfo) => {
      await page.emulateMedia({ reducedMotion: 'reduce' });
      await page.goto(`/index.html?lang=${locale}&theme=${theme}#log-lsp`);
      const section = page.locator('#log-lsp');
      const cases = section.locator('[data-gallery-case]');
      await expect(cases.first()).toBeVisible();
      const ids = await cases.evaluateAll((elements) =>
        (elements as HTMLElement[]).map((element) => element.dataset.galleryCase ?? ''),
      );
      for (const operation of [
        'definition',
        'references',
        'hover',
        'document-symbols',
        'workspace-symbols',
        'implementation',
        'incoming-calls',
        'outgoing-calls',
        'diagnostics',
        'no-server',
        'starting',
        'timed-out',
        'crashed',
        'not-found',
      ]) {
        expect(ids).toContain(`handmade/lsp/lsp-${operation}`);
      }
      const folder = testInfo.outputPath('lsp-cards', `${locale}-${theme}`);
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
      // References: a workspace file is a link to its line; a file elsewhere and another URI
      // are text.
      const references = section.locator('[data-gallery-case="handmade/lsp/lsp-references"]');
      await expect(references.locator('li.qt-lsp__file')).toHaveCount(5);
      await expect(references.locator('li.qt-lsp__file[data-openable="false"]')).toHaveCount(2);
      await expect(references.locator('li.qt-lsp__file[data-openable="false"] button')).toHaveCount(
        0,
      );
      await expect(references).toContainText('untitled:Untitled-1');
      await expect(references).toContainText(
        '~/.local/lib/python3.12/site-packages/docs/__init__.py',
      );
      const place = references.locator('button.qt-lsp__place', { hasText: '31:16' });
      await place.focus();
      await page.keyboard.press('Enter');
      await expect(page.locator('.gallery__host')).toHaveText('Host: openFile("src/app.py")');
      // A hover is Markdown; diagnostics say their severity in words.
      const hover = section.locator('[data-gallery-case="handmade/lsp/lsp-hover"]');
      await expect(hover.locator('.qp-markdown strong')).toHaveText('strict');
      const diagnostics = section.locator('[data-gallery-case="handmade/lsp/lsp-diagnostics"]');
      await expect(diagnostics.locator('.qt-lsp__row').first()).toHaveAttribute(
        'data-severity',
        'error',
      );
      await expect(diagnostics.locator('.qt-lsp-severity').first()).toHaveText(
        locale === 'en' ? '✕error' : '✕错误',
      );
      // No server: the install hint; a crash is a capsule on the row.
      await expect(
        section.locator('[data-gallery-case="handmade/lsp/lsp-no-server"] code'),
      ).toHaveText('npm install -g pyright');
      await expect(
        section.locator('[data-gallery-case="handmade/lsp/lsp-crashed"] .qp-capsule'),
      ).toBeVisible();
      // Data of another shape keeps the generic card.
      await expect(
        section.locator('[data-gallery-case="handmade/lsp/lsp-malformed"] .qp-row__title'),
      ).toContainText('lsp');
      // The edit that broke a call: its new problems on the row, the resolved one gone.
      const edit = section.locator('[data-gallery-case="handmade/lsp/edit-diagnostics"]');
      await expect(edit.locator('.qt-lsp-edit__mark')).toBeVisible();
      await expect(edit.locator('.qt-lsp__row[data-gone="true"]')).toHaveCount(1);
      const scheme = await page.evaluate(
        () => getComputedStyle(document.documentElement).colorScheme,
      );
      expect(scheme).toContain(theme);
      const checked = await new AxeBuilder({ page }).include('#log-lsp').analyze();
      expect(checked.violations).toEqual([]);
    });
  }
}
