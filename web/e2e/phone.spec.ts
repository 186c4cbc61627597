// The page on a phone (390×844, dark, zh-CN) against a real `qilin serve`: the session list
// folds behind a button, the transcript and composer take the width, a card's long summary
// truncates and its output scrolls sideways; axe-core finds nothing serious, folded or not.
import AxeBuilder from '@axe-core/playwright';
import { expect, test, type Page } from '@playwright/test';
import { screenshot } from './support/screens';
import { callServer, recordTurn, startScriptedServer, type QilinServer } from './support/server';

const PHONE = { width: 390, height: 844 };

const AGENT = `name: e2e-phone
description: Runs one long command and answers at length, for the page on a phone.
instructions: Follow the script.
tools: [bash]
skills:
  available: []
limits:
  max_steps: 5
review:
  default: allow
`;

// A command too long for the row, whose output is one line far wider than the screen.
const COMMAND =
  "printf 'phone-layout-%.0s' $(seq 1 40); echo; echo checking that a long command truncates in its row";
const ANSWER =
  'The command printed one very long line. On a narrow screen the transcript keeps the whole width, so this answer reads as ordinary sentences rather than a column of single words.';
const SCRIPT = `chunk_delay_ms: 0
turns:
  - calls:
      - tool: bash
        args: {command: ${JSON.stringify(COMMAND)}}
  - say: ${JSON.stringify(ANSWER)}
`;

let server: QilinServer;
let sessionId: string;

test.beforeAll(async () => {
  server = await startScriptedServer(AGENT, SCRIPT);
  ({ id: sessionId } = await callServer<{ id: string }>(server, 'POST', '/api/sessions', {}));
  await recordTurn(
    server,
    sessionId,
    { prompt: 'Print a long line and tell me how it looks on a phone', clientTurnId: 'phone-1' },
    1,
  );
});

test.afterAll(async () => {
  await server?.stop();
});

/** The phone the issue was seen on (dark, zh-CN), and the other scheme and language. */
const LOOKS = [
  { colorScheme: 'dark', locale: 'zh-CN', sessions: '会话' },
  { colorScheme: 'light', locale: 'en', sessions: 'Sessions' },
] as const;

/** axe-core's serious and critical violations on the page as it is now. */
async function seriousViolations(page: Page) {
  const { violations } = await new AxeBuilder({ page }).analyze();
  return violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .map((violation) => ({
      id: violation.id,
      nodes: violation.nodes.map((node) => node.target.join(' ')),
    }));
}

/** The element's box, which must exist. */
async function boxOf(page: Page, selector: string) {
  const box = await page.locator(selector).first().boundingBox();
  if (box === null) throw new Error(`${selector} is not shown`);
  return box;
}

/** Opens the session in the page, as a link to it with the token would. */
async function openSession(page: Page) {
  await page.goto(`${server.origin}/sessions/${sessionId}#token=${server.token}`);
  await expect(page.locator('.qc-turn__end--completed')).toBeVisible();
}

for (const look of LOOKS) {
  test.describe(`${look.colorScheme}, ${look.locale}`, () => {
    test.use({ viewport: PHONE, colorScheme: look.colorScheme, locale: look.locale });

    test('on a phone the transcript takes the width and the session list folds away', async ({
      page,
    }) => {
      await openSession(page);
      const toggle = page.getByRole('button', { name: look.sessions, exact: true });
      const sessions = page.getByRole('navigation', { name: look.sessions, exact: true });
      // Folded: the list is out of the way, the transcript and the composer use the screen.
      await expect(toggle).toBeVisible();
      await expect(toggle).toHaveAttribute('aria-expanded', 'false');
      await expect(sessions).toBeHidden();
      const transcript = await boxOf(page, '.qc-transcript');
      expect(transcript.x).toBeLessThanOrEqual(1);
      expect(transcript.width).toBeGreaterThanOrEqual(PHONE.width - 1);
      expect((await boxOf(page, '.qa-composer__input')).width).toBeGreaterThan(PHONE.width * 0.85);
      // The answer reads as lines of words, not a word per line.
      const answer = page.getByText(ANSWER);
      expect((await answer.boundingBox())?.width ?? 0).toBeGreaterThan(PHONE.width * 0.8);
      // Nothing is wider than the screen: the page never scrolls sideways.
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
        PHONE.width,
      );

      // The card's summary is cut with an ellipsis inside the screen; its output scrolls sideways.
      const row = page.locator('.qt-card .qp-row__text').first();
      const rowBox = await row.boundingBox();
      expect((rowBox?.x ?? 0) + (rowBox?.width ?? Infinity)).toBeLessThanOrEqual(PHONE.width);
      expect(
        await row.evaluate((element) => ({
          cut: element.scrollWidth > element.clientWidth,
          overflow: getComputedStyle(element).textOverflow,
        })),
      ).toEqual({ cut: true, overflow: 'ellipsis' });
      await page.locator('.qt-card button.qp-row__main').first().click();
      const output = page.locator('.qp-terminal__text').first();
      await expect(output).toContainText('phone-layout-phone-layout-');
      expect(
        await output.evaluate((element) => ({
          scrolls: element.scrollWidth > element.clientWidth,
          overflowX: getComputedStyle(element).overflowX,
          inside: element.getBoundingClientRect().right <= window.innerWidth,
        })),
      ).toEqual({ scrolls: true, overflowX: 'auto', inside: true });
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
        PHONE.width,
      );
      await screenshot(page, `phone-${look.colorScheme}-${look.locale}-transcript`);
      expect(await seriousViolations(page)).toEqual([]);

      // Unfolded: the list opens over the transcript, most of the width, and says it is open.
      await toggle.click();
      await expect(toggle).toHaveAttribute('aria-expanded', 'true');
      await expect(sessions).toBeVisible();
      const list = await boxOf(page, '.qa-sidebar');
      expect(list.width).toBeLessThan(PHONE.width);
      expect(list.width).toBeGreaterThan(PHONE.width * 0.6);
      await screenshot(page, `phone-${look.colorScheme}-${look.locale}-sessions`);
      expect(await seriousViolations(page)).toEqual([]);

      // Escape folds it and gives the focus back to the button.
      await page.keyboard.press('Escape');
      await expect(sessions).toBeHidden();
      await expect(toggle).toBeFocused();
      await expect(toggle).toHaveAttribute('aria-expanded', 'false');

      // Picking a session from the list folds it too, and shows that session.
      await toggle.click();
      await sessions.getByRole('link', { name: /Print a long line/ }).click();
      await expect(sessions).toBeHidden();
      await expect(page.getByText(ANSWER)).toBeVisible();
    });

    test('on a wide screen the session list stays beside the transcript, with no button', async ({
      page,
    }) => {
      await page.setViewportSize({ width: 1200, height: 844 });
      await openSession(page);
      await expect(
        page.getByRole('navigation', { name: look.sessions, exact: true }),
      ).toBeVisible();
      await expect(page.getByRole('button', { name: look.sessions, exact: true })).toBeHidden();
      const list = await boxOf(page, '.qa-sidebar');
      const transcript = await boxOf(page, '.qc-transcript');
      expect(transcript.x).toBeGreaterThanOrEqual(list.x + list.width - 1);
    });
  });
}
