// Schedules on a real `qilin serve`: a schedule created through the API shows in the session's
// schedules panel (one created while the page is open arrives by the session's stream), and
// the panel's Delete deletes it on the server. On a phone the panel keeps to the screen's width.
import AxeBuilder from '@axe-core/playwright';
import { expect, test, type Page } from '@playwright/test';
import type { ScheduleListOutput, ScheduleRecord } from '@qilin-agent/protocol';
import { callServer, startScriptedServer, type QilinServer } from './support/server';
import { promptNewSession } from './support/session';

const AGENT = `name: e2e-schedules
description: Holds schedules, for the schedules panel's end-to-end test.
instructions: Follow the script.
tools: []
skills:
  available: []
limits:
  max_steps: 4
review:
  default: allow
`;

const SCRIPT = `chunk_delay_ms: 0
turns:
  - say: "Done."
`;

const PHONE = { width: 390, height: 844 };

let server: QilinServer | undefined;

/** Opens a session in the page. */
async function open(page: Page, id: string) {
  if (server === undefined) throw new Error('the server did not start');
  await page.goto(`${server.origin}/sessions/${id}#token=${server.token}`);
}

test.beforeAll(async () => {
  server = await startScriptedServer(AGENT, SCRIPT);
});

test.afterAll(async () => {
  await server?.stop();
});

test('a schedule created through the API shows in the panel and is deleted from it', async ({
  page,
}) => {
  const { id } = await callServer<{ id: string }>(server, 'POST', '/api/sessions', {});
  const weekdays = await callServer<ScheduleRecord>(
    server,
    'POST',
    `/api/sessions/${id}/schedules`,
    {
      prompt: 'Summarise the overnight CI failures.',
      cron: '0 9 * * 1-5',
      timezone: 'Europe/Paris',
    },
  );
  expect(weekdays.status).toBe('active');
  expect(weekdays.nextFires.length).toBeGreaterThan(0);
  await page.emulateMedia({ reducedMotion: 'reduce' });
  await open(page, id);
  const panel = page.getByRole('region', { name: 'Schedules', exact: true });
  await expect(panel).toBeVisible();
  const first = panel.locator(`tr[data-schedule="${weekdays.id}"]`);
  await expect(first).toContainText(weekdays.description);
  await expect(first).toContainText('not run yet');
  await expect(first.locator('time').first()).toHaveAttribute(
    'datetime',
    weekdays.nextFires[0] ?? '',
  );

  // One created while the page is open arrives by the session's stream, newest first.
  const hourly = await callServer<ScheduleRecord>(server, 'POST', `/api/sessions/${id}/schedules`, {
    prompt: 'Check the deploy queue.',
    every: '1h',
  });
  const rows = panel.locator('tbody tr');
  await expect(rows).toHaveCount(2);
  await expect(rows.first()).toHaveAttribute('data-schedule', hourly.id);
  const axe = await new AxeBuilder({ page }).include('.qa-schedules').analyze();
  expect(axe.violations).toEqual([]);

  // On a phone the panel keeps to the screen's width.
  await page.setViewportSize(PHONE);
  await expect(rows).toHaveCount(2);
  const widths = await page.evaluate(() => ({
    page: document.documentElement.scrollWidth,
    viewport: window.innerWidth,
  }));
  expect(widths.page).toBeLessThanOrEqual(widths.viewport);
  const box = await panel.boundingBox();
  expect(box?.width ?? Infinity).toBeLessThanOrEqual(PHONE.width);

  // Delete: gone from the panel, deleted on the server.
  await panel
    .getByRole('button', { name: `Delete the schedule “${weekdays.description}”` })
    .click();
  await expect(rows).toHaveCount(1);
  const listed = await callServer<ScheduleListOutput>(
    server,
    'GET',
    `/api/sessions/${id}/schedules`,
  );
  const after = listed.schedules.find((known) => known.id === weekdays.id);
  expect(after === undefined || after.status === 'deleted').toBe(true);
  await panel.getByRole('button', { name: `Delete the schedule “${hourly.description}”` }).click();
  await expect(panel).toBeHidden();
});

// The model's own schedule calls, recorded by the real runtime, read by the schedule cards.
const TOOLS_AGENT = `name: e2e-schedule-tools
description: Calls the schedule tools, for the schedule cards' end-to-end test.
instructions: Follow the script.
tools: [schedule_create, schedule_list, schedule_delete]
skills:
  available: []
limits:
  max_steps: 10
review:
  default: allow
`;

const TOOLS_PROMPT = 'Summarise the overnight CI failures.';
const TOOLS_SCRIPT = `chunk_delay_ms: 0
turns:
  - calls:
      - tool: schedule_create
        args: {prompt: ${JSON.stringify(TOOLS_PROMPT)}, cron: "0 9 * * 1-5", timezone: "Asia/Shanghai"}
  - calls:
      - tool: schedule_list
        args: {}
  - calls:
      - tool: schedule_delete
        args: {id: "sch_missing"}
  - say: "Scheduled."
`;

test.describe('the schedule tools’ cards', () => {
  let tools: QilinServer | undefined;

  test.beforeAll(async () => {
    tools = await startScriptedServer(TOOLS_AGENT, TOOLS_SCRIPT);
  });

  test.afterAll(async () => {
    await tools?.stop();
  });

  test('each schedule call of a real session shows its card, and the panel the schedule', async ({
    page,
  }) => {
    test.setTimeout(120_000);
    await promptNewSession(page, tools, 'Every weekday morning, the CI');
    const rows = page.locator('.qt-card .qp-row');
    // The unknown id's deletion failed: it keeps its plain card under its own title.
    await expect(rows.filter({ hasText: 'Tool call ·' })).toHaveCount(0);
    const created = page.locator('.qt-card').filter({ hasText: 'Schedule' }).first();
    await created.locator('button.qp-row__main').click();
    await expect(created).toContainText(TOOLS_PROMPT);
    await expect(created.locator('.qt-schedule__fires time')).toHaveCount(3);
    await expect(created).toContainText('Asia/Shanghai');
    const listed = page.locator('.qt-card').filter({ hasText: 'Schedules' }).first();
    await expect(listed.locator('.qp-row')).toContainText('1 schedule');
    const deleted = page.locator('.qt-card').filter({ hasText: 'Delete schedule' });
    await expect(deleted.locator('.qp-row')).toContainText('sch_missing');
    // The panel took the schedule from the session's stream.
    const panel = page.getByRole('region', { name: 'Schedules', exact: true });
    await expect(panel.locator('tbody tr')).toHaveCount(1);
    await expect(panel).toContainText(TOOLS_PROMPT);
  });
});
