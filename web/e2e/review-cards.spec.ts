// Auto review's cards in the gallery, light and dark, English and Chinese: refused by the
// reviewer model, refused after it failed or timed out, the reviewed mark, a refusal a person
// allowed and the retry that ran by the grant, nested under run_code; each screenshotted,
// opened, and checked by axe-core. "Allow this call" reaches the host and becomes "Allowed".
import { expect, type Locator } from '@playwright/test';
import {
  expectAccessible,
  expectThemedAndAccessible,
  openFamily,
  screenshotEveryCase,
  testEachVariant,
  variantFolder,
} from './support/gallery';

const TEXT = {
  en: {
    denied: 'Auto review: denied',
    failed: 'Auto review failed',
    timedOut: 'Auto review timed out',
    highRisk: 'high risk',
    reason: 'Not run: Force-pushing to main rewrites history the whole team shares.',
    allow: 'Allow this call',
    allowed: 'Allowed',
    reviewed: 'reviewed · low risk',
    reviewedName:
      'Allowed by auto review (scripted:reviewer.yaml), low risk: Running the tests only reads and builds inside the workspace.',
    granted: 'allowed by you',
    asked: 'review timed out',
  },
  'zh-CN': {
    denied: '自动审查：已拒绝',
    failed: '自动审查失败',
    timedOut: '自动审查超时',
    highRisk: '高风险',
    reason: '未执行：Force-pushing to main rewrites history the whole team shares.',
    allow: '允许此次调用',
    allowed: '已允许',
    reviewed: '已审查 · 低风险',
    reviewedName:
      '自动审查（scripted:reviewer.yaml）已允许，低风险：Running the tests only reads and builds inside the workspace.',
    granted: '由你允许',
    asked: '审查超时',
  },
} as const;

/** The row of `callId` itself (not of a call nested under it). */
function rowOf(scope: Locator, callId: string): Locator {
  return scope.locator(`[data-chat-call-id="${callId}"] > .qt-card > .qp-row`);
}

testEachVariant('auto review cards', async (variant) => {
  const { page, locale, theme } = variant;
  const text = TEXT[locale];
  await page.emulateMedia({ colorScheme: theme });
  const { section, ids } = await openFamily(variant, 'auto-review');
  expect(ids.length).toBe(8);
  const folder = variantFolder(variant, 'review-cards');
  await screenshotEveryCase(section, ids, folder);
  const entry = (id: string) => section.locator(`[data-gallery-case="handmade/auto-review/${id}"]`);

  // Who refused, on the row; the reason for the person once opened; the control.
  const denied = rowOf(entry('bash-denied'), 'call_r1');
  await expect(denied).toContainText(text.denied);
  await expect(denied).toContainText(text.highRisk);
  await expect(entry('bash-denied').locator('.qt-denied')).toHaveText(text.reason);
  await expect(rowOf(entry('bash-failed'), 'call_r2')).toContainText(text.failed);
  await expect(rowOf(entry('bash-timed-out'), 'call_r3')).toContainText(text.timedOut);
  for (const [id, callId] of [
    ['bash-denied', 'call_r1'],
    ['bash-failed', 'call_r2'],
    ['bash-timed-out', 'call_r3'],
  ] as const) {
    await expect(rowOf(entry(id), callId).getByRole('button', { name: text.allow })).toBeVisible();
  }
  // A refusal a person allowed reads "Allowed"; the retry that used the grant is marked.
  await expect(
    rowOf(entry('bash-granted'), 'call_r5').getByRole('button', { name: text.allowed }),
  ).toHaveAttribute('aria-disabled', 'true');
  await expect(rowOf(entry('bash-retried'), 'call_r6').locator('.qt-review-mark')).toHaveText(
    text.granted,
  );
  // The quiet mark: the risk shown, the reason its name and tooltip.
  const mark = rowOf(entry('bash-reviewed'), 'call_r4').getByRole('img', {
    name: text.reviewedName,
  });
  await expect(mark).toHaveText(text.reviewed);
  await expect(mark).toHaveAttribute('title', text.reviewedName);
  await expect(rowOf(entry('bash-asked'), 'call_r7').locator('.qt-review-mark')).toHaveText(
    text.asked,
  );
  // Nested under run_code: a mark and a refusal with its control.
  const nested = entry('run_code-nested');
  await expect(rowOf(nested, 'call_r8.1').locator('.qt-review-mark')).toBeVisible();
  await expect(rowOf(nested, 'call_r8.2')).toContainText(text.denied);
  await expect(rowOf(nested, 'call_r8').locator('.qt-review-mark')).toHaveCount(0);

  await expectThemedAndAccessible(variant, '#log-auto-review');

  // "Allow this call" from the keyboard reaches the host, then reads "Allowed".
  const allow = rowOf(entry('bash-denied'), 'call_r1').getByRole('button', {
    name: text.allow,
  });
  await allow.focus();
  await page.keyboard.press('Enter');
  await expect(page.locator('.gallery__host')).toHaveText('Host: allowCall("call_r1")');
  await expect(
    rowOf(entry('bash-denied'), 'call_r1').getByRole('button', { name: text.allowed }),
  ).toHaveAttribute('aria-disabled', 'true');
  await entry('bash-denied').screenshot({ path: `${folder}/allowed.png` });
  await expectAccessible(page, '#log-auto-review');
});
