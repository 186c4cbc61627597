import AxeBuilder from '@axe-core/playwright';
import { expect, test, type Page } from '@playwright/test';

async function openGallery(page: Page, query = ''): Promise<void> {
  await page.goto(`/index.html${query}`);
  await expect(page.locator('[data-gallery-case]').first()).toBeVisible();
}

/** The toggle of a case's own call (not the calls around it). */
function ownToggle(page: Page, caseId: string, callId: string) {
  return page
    .locator(
      `[data-gallery-case="${caseId}"] [data-chat-call-id="${callId}"] > .qt-card > .qp-row > button.qp-row__main`,
    )
    .first();
}

test('a screenshot of every card in every state, collapsed and expanded', async ({
  page,
}, testInfo) => {
  await openGallery(page);
  await page.emulateMedia({ reducedMotion: 'reduce' });
  const combos = await page.$$eval('[data-gallery-case]', (cases) => {
    const seen = new Map<string, { id: string; callId: string }>();
    for (const element of cases as HTMLElement[]) {
      const key = `${element.dataset.tool}-${element.dataset.state}`;
      if (!seen.has(key) && element.dataset.callId) {
        seen.set(key, { id: element.dataset.galleryCase ?? '', callId: element.dataset.callId });
      }
    }
    return [...seen.entries()];
  });
  expect(combos.length).toBeGreaterThan(30);
  for (const [name, { id, callId }] of combos) {
    const entry = page.locator(`[data-gallery-case="${id}"]`);
    await entry.scrollIntoViewIfNeeded();
    await entry.screenshot({ path: testInfo.outputPath('screenshots', `${name}.png`) });
    const toggle = ownToggle(page, id, callId);
    if ((await toggle.count()) === 1) {
      await toggle.click();
      await expect(toggle).toHaveAttribute('aria-expanded', 'true');
      await entry.screenshot({ path: testInfo.outputPath('screenshots', `${name}-expanded.png`) });
      await toggle.click();
      await expect(toggle).toHaveAttribute('aria-expanded', 'false');
    }
  }
});

test('rows expand and collapse from the keyboard', async ({ page }) => {
  await openGallery(page);
  const toggle = ownToggle(page, 'files/call_7/done', 'call_7');
  await toggle.focus();
  await expect(toggle).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(toggle).toHaveAttribute('aria-expanded', 'true');
  const details = page.locator(
    `#${await toggle.getAttribute('aria-controls')}`.replace(/:/g, '\\:'),
  );
  await expect(details).toContainText('return {"Total"');
  // Tab reaches the actions and the card's own controls.
  await page.keyboard.press('Tab');
  await expect(page.locator(':focus')).toHaveText('Open');
  await toggle.focus();
  await page.keyboard.press('Space');
  await expect(toggle).toHaveAttribute('aria-expanded', 'false');
  await expect(details).toHaveCount(0);
});

test('a long output folds, opens and copies its text', async ({ page, context }) => {
  await context.grantPermissions(['clipboard-read', 'clipboard-write']);
  await openGallery(page);
  await ownToggle(page, 'shell/call_13/done', 'call_13').click();
  const terminal = page.locator('[data-gallery-case="shell/call_13/done"] .qp-terminal');
  await expect(terminal).toContainText('… 24 more lines');
  await terminal.getByRole('button', { name: 'Show all output' }).click();
  await expect(terminal).toContainText('20');
  await expect(terminal).not.toContainText('more lines');
  await terminal.getByRole('button', { name: 'Copy output' }).click();
  await expect(terminal.getByRole('button', { name: 'Copied' })).toBeVisible();
  expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(
    Array.from({ length: 40 }, (_, i) => `${i + 1}\n`).join(''),
  );
  // Live output of a running call shows in its terminal.
  await ownToggle(page, 'interrupts/call_3.2/running', 'call_3.2').click();
  await expect(
    page.locator('[data-gallery-case="interrupts/call_3.2/running"] .qp-terminal'),
  ).toContainText('started');
});

test('running rows sweep once across their text; finished rows and reduced motion stay still', async ({
  page,
}) => {
  await openGallery(page);
  const animation = (selector: string) =>
    page
      .locator(selector)
      .first()
      .evaluate((element) => getComputedStyle(element).animationName);
  expect(await animation('[data-state="running"] .qp-row--running .qp-row__text')).toBe('qp-sweep');
  expect(
    await animation(
      '[data-gallery-case="files/call_7/done"] [data-chat-call-id="call_7"] .qp-row__text',
    ),
  ).toBe('none');
  // One sweep over the whole line: the title, separator and summary have no animation of their own.
  expect(await animation('[data-state="running"] .qp-row--running .qp-row__summary')).toBe('none');
  await page.emulateMedia({ reducedMotion: 'reduce' });
  expect(await animation('[data-state="running"] .qp-row--running .qp-row__text')).toBe('none');
});

test('the host gets the path as the call gave it', async ({ page }) => {
  await openGallery(page);
  await page
    .locator('[data-gallery-case="files/call_2/done"]')
    .getByRole('button', { name: 'Open src/report.py' })
    .click();
  await expect(page.locator('.gallery__host')).toHaveText('Host: openFile("src/report.py")');
});

test('a call waiting for a person says what for, and how the request ended', async ({ page }) => {
  await openGallery(page);
  // An approval: the row waits (no sweep), the note gives the policy's reason.
  const approval = page.locator('[data-gallery-case="review/call_2/waiting"]');
  await expect(approval).toHaveAttribute('data-state', 'waiting');
  await expect(approval.locator('[data-chat-call-id="call_2"] .qp-row')).toHaveAttribute(
    'data-state',
    'waiting',
  );
  await expect(approval.getByRole('status')).toHaveText(
    'Waiting for approval · pushing publishes the work',
  );
  expect(
    await approval
      .locator('.qp-row__text')
      .first()
      .evaluate((element) => getComputedStyle(element).animationName),
  ).toBe('none');
  // Once answered the call runs again; the note says who approved or denied it.
  await expect(page.locator('[data-gallery-case="review/call_2/done"] .qt-request')).toHaveText(
    'Approved by fixture · pushing publishes the work',
  );
  await expect(page.locator('[data-gallery-case="review/call_3/done"] .qt-request')).toHaveText(
    'Denied by fixture · pushing publishes the work',
  );
  // Questions: listed while waiting, answered on the card after.
  const asking = page.locator('[data-gallery-case="tasks/call_7/waiting"]');
  await expect(asking.getByRole('status')).toContainText('Waiting for your answer');
  await expect(asking.locator('.qt-request__questions li')).toHaveText([
    'Which version are the notes for? Options: 1.4.0 / 2.0.0',
    'When should they be published?',
    'Which kinds of change should be listed? Options: features / fixes / internal · Pick any number',
  ]);
  await ownToggle(page, 'tasks/call_7/done', 'call_7').click();
  await expect(page.locator('[data-gallery-case="tasks/call_7/done"] .qt-questions')).toContainText(
    'Answer: features, fixes',
  );
  await expect(page.locator('[data-gallery-case="tasks/call_7/done"] .qt-request')).toHaveCount(0);
});

for (const locale of ['en', 'zh-CN']) {
  test(`no accessibility violations (${locale})`, async ({ page }) => {
    await openGallery(page, `?lang=${locale}`);
    if (locale === 'zh-CN') await expect(page.getByText('自动审查').first()).toBeVisible();
    const collapsed = await new AxeBuilder({ page }).analyze();
    expect(collapsed.violations).toEqual([]);
    // Every card of two logs open, with their terminals, diffs, lists and images.
    await page.$$eval('#log-files, #log-shell, #log-tasks, #log-review', (logs) => {
      for (const log of logs) {
        log
          .querySelectorAll<HTMLButtonElement>('button.qp-row__main[aria-expanded="false"]')
          .forEach((toggle) => toggle.click());
      }
    });
    await expect(page.locator('#log-files button.qp-row__main[aria-expanded="false"]')).toHaveCount(
      0,
    );
    const expanded = await new AxeBuilder({ page })
      .include('#log-files')
      .include('#log-shell')
      .include('#log-tasks')
      .include('#log-review')
      .analyze();
    expect(expanded.violations).toEqual([]);
  });
}
