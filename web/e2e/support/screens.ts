// Screenshots of the page's main states, kept as CI artefacts in web/test-results/screens.
import type { Page } from '@playwright/test';
import { join, resolve } from 'node:path';

/** The folder the screenshots go to (under Playwright's output folder, ignored by git). */
export const SCREENS = resolve(import.meta.dirname, '../../test-results/screens');

/** Saves the page as `NAME.png` in [`SCREENS`]. */
export async function screenshot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(SCREENS, `${name}.png`) });
}
