// The gallery's tool-family sections as the card specs check them: one test per locale and
// theme, the family's section opened, every case screenshotted closed and expanded, the theme
// and axe-core checked.
import AxeBuilder from '@axe-core/playwright';
import { expect, test, type Locator, type Page, type TestInfo } from '@playwright/test';

/** The gallery's languages. */
export const LOCALES = ['en', 'zh-CN'] as const;
/** The gallery's themes. */
export const THEMES = ['light', 'dark'] as const;

/** One test's page, and the language and theme it runs in. */
export interface Variant {
  readonly page: Page;
  readonly testInfo: TestInfo;
  readonly locale: (typeof LOCALES)[number];
  readonly theme: (typeof THEMES)[number];
}

/** Declares `<title> (<locale>, <theme>)` for every language and theme, each running `body`. */
export function testEachVariant(title: string, body: (variant: Variant) => Promise<void>): void {
  for (const locale of LOCALES) {
    for (const theme of THEMES) {
      test(`${title} (${locale}, ${theme})`, async ({ page }, testInfo) => {
        await body({ page, testInfo, locale, theme });
      });
    }
  }
}

/** The folder a variant's screenshots of one spec go to: `<spec>/<locale>-<theme>`. */
export function variantFolder(variant: Variant, spec: string): string {
  return variant.testInfo.outputPath(spec, `${variant.locale}-${variant.theme}`);
}

/**
 * Opens the gallery at the section `#log-<family>` in the variant's language and theme, motion
 * reduced; returns the section and its cases' ids once the first case shows.
 */
export async function openFamily(
  variant: Variant,
  family: string,
): Promise<{ section: Locator; ids: string[] }> {
  const { page, locale, theme } = variant;
  await page.emulateMedia({ reducedMotion: 'reduce' });
  await page.goto(`/index.html?lang=${locale}&theme=${theme}#log-${family}`);
  const section = page.locator(`#log-${family}`);
  const cases = section.locator('[data-gallery-case]');
  await expect(cases.first()).toBeVisible();
  const ids = await cases.evaluateAll((elements) =>
    (elements as HTMLElement[]).map((element) => element.dataset.galleryCase ?? ''),
  );
  return { section, ids };
}

/** Expects more than `moreThan` cases `handmade/<family>/<tool>-…` for each of `tools`. */
export function expectToolsShown(
  ids: readonly string[],
  family: string,
  tools: readonly string[],
  moreThan: number,
): void {
  for (const tool of tools) {
    expect(
      ids.filter((id) => id.startsWith(`handmade/${family}/${tool}-`)).length,
      `cases of ${tool}`,
    ).toBeGreaterThan(moreThan);
  }
}

/**
 * Screenshots each case of `section` into `folder`, then, if its row opens, opens it, lets
 * `expand` open more of it, and screenshots it again as `<name>-expanded.png`.
 */
export async function screenshotEveryCase(
  section: Locator,
  ids: readonly string[],
  folder: string,
  expand?: (entry: Locator) => Promise<void>,
): Promise<void> {
  for (const id of ids) {
    const entry = section.locator(`[data-gallery-case="${id}"]`);
    const name = id.replace(/[^A-Za-z0-9_.-]/g, '-');
    await entry.scrollIntoViewIfNeeded();
    await entry.screenshot({ path: `${folder}/${name}.png` });
    const toggle = entry.locator('button.qp-row__main').first();
    if ((await toggle.count()) === 1) {
      await toggle.click();
      await expect(toggle).toHaveAttribute('aria-expanded', 'true');
      await expand?.(entry);
      await entry.screenshot({ path: `${folder}/${name}-expanded.png` });
    }
  }
}

/** Clicks open every `<details>` matching `selector` in `entry`. */
export async function openAllDetails(entry: Locator, selector: string): Promise<void> {
  for (const details of await entry.locator(selector).all()) {
    await details.locator('summary').click();
  }
}

/** Expects axe-core to find no violation in what `selector` matches. */
export async function expectAccessible(page: Page, selector: string): Promise<void> {
  const checked = await new AxeBuilder({ page }).include(selector).analyze();
  expect(checked.violations).toEqual([]);
}

/** Expects the page in the variant's colour scheme, and no axe-core violation in `selector`. */
export async function expectThemedAndAccessible(variant: Variant, selector: string): Promise<void> {
  const scheme = await variant.page.evaluate(
    () => getComputedStyle(document.documentElement).colorScheme,
  );
  expect(scheme).toContain(variant.theme);
  await expectAccessible(variant.page, selector);
}
