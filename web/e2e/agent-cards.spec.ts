// The agent family's cards in the gallery: every state, light and dark, English and Chinese,
// each expanded, screenshotted and checked by axe-core.
import { expect } from '@playwright/test';
import {
  expectThemedAndAccessible,
  expectToolsShown,
  openFamily,
  screenshotEveryCase,
  testEachVariant,
  variantFolder,
} from './support/gallery';

testEachVariant('agent family cards', async (variant) => {
  const { section, ids } = await openFamily(variant, 'agents');
  // Each tool of the family in several states.
  expectToolsShown(
    ids,
    'agents',
    ['agent', 'agent_wait', 'agent_list', 'agent_stop', 'agent_send'],
    1,
  );
  const folder = variantFolder(variant, 'agent-cards');
  await screenshotEveryCase(section, ids, folder);
  // A running agent shows its child's latest calls, each its own card; the rest on demand.
  const running = section.locator('[data-gallery-case="handmade/agents/agent-running"]');
  const childCalls = running.locator('[data-child-session="ses_child1"]');
  const roots = childCalls.locator('.qt-child-calls__call > .qt-tree > .qt-call');
  await expect(roots).toHaveCount(3);
  await childCalls.locator('.qt-child-calls__body > button').first().click();
  expect(await roots.count()).toBeGreaterThan(3);
  await running.screenshot({ path: `${folder}/child-calls-all.png` });
  // The child's session opens from the card; a background start is a receipt.
  const completed = section.locator('[data-gallery-case="handmade/agents/agent-completed"]');
  await expect(completed.locator('a.qt-child-link')).toHaveAttribute(
    'href',
    '/sessions/ses_child1',
  );
  const background = section.locator('[data-gallery-case="handmade/agents/agent-background"]');
  await expect(background.locator('.qp-row').first()).toHaveAttribute('data-state', 'receipt');
  await expectThemedAndAccessible(variant, '#log-agents');
});
