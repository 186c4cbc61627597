// The code navigation cards in the gallery — every operation, every empty reason, non-file URIs,
// a hover, diagnostics and the diagnostics edit cards carry — light and dark, English and
// Chinese, each expanded, screenshotted and checked by axe-core; and on a real `qilin serve`, an
// lsp card's location opening the file sidebar at its line.
import { expect, test, type Page } from '@playwright/test';
import type { LspOutput, Snapshot, ToolNode } from '@qilin-agent/protocol';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { delimiter, join, resolve } from 'node:path';
import {
  expectAccessible,
  expectThemedAndAccessible,
  openFamily,
  screenshotEveryCase,
  testEachVariant,
  variantFolder,
} from './support/gallery';
import { qilinBinary, startScriptedServer, type QilinServer } from './support/server';

testEachVariant('code navigation cards', async (variant) => {
  const { page, locale } = variant;
  const { section, ids } = await openFamily(variant, 'lsp');
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
  await screenshotEveryCase(section, ids, variantFolder(variant, 'lsp-cards'));
  // References: a workspace file is a link to its line; a file elsewhere and another URI
  // are text.
  const references = section.locator('[data-gallery-case="handmade/lsp/lsp-references"]');
  await expect(references.locator('li.qt-lsp__file')).toHaveCount(5);
  await expect(references.locator('li.qt-lsp__file[data-openable="false"]')).toHaveCount(2);
  await expect(references.locator('li.qt-lsp__file[data-openable="false"] button')).toHaveCount(0);
  await expect(references).toContainText('untitled:Untitled-1');
  await expect(references).toContainText('~/.local/lib/python3.12/site-packages/docs/__init__.py');
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
  await expect(section.locator('[data-gallery-case="handmade/lsp/lsp-no-server"] code')).toHaveText(
    'npm install -g pyright',
  );
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
  await expectThemedAndAccessible(variant, '#log-lsp');
});

// A real `qilin serve` with the scripted model and pyright: the model asks where `describe` is
// defined; the card's location opens the file sidebar at that line, and the header's language
// servers say pyright is ready.
/** The language servers `scripts/test` installs for the LSP tests, put first on the PATH. */
const TEST_SERVERS = resolve(import.meta.dirname, '../../tests/lsp-servers/node_modules/.bin');
const SERVER_PATH = [TEST_SERVERS, process.env.PATH ?? ''].join(delimiter);

/** True when `command` is on `path`. */
function onPath(command: string, path: string): boolean {
  return path.split(delimiter).some((folder) => folder !== '' && existsSync(join(folder, command)));
}

/** True when the `qilin` binary under test has the `lsp` tool. */
function hasLspTool(): boolean {
  try {
    execFileSync(qilinBinary(), ['tools', 'show', 'lsp'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

test.describe('with the lsp tool and pyright', () => {
  test.skip(!hasLspTool(), 'the qilin binary under test has no lsp tool');
  test.skip(
    !onPath('pyright-langserver', SERVER_PATH),
    'pyright-langserver is not installed (npm ci in tests/lsp-servers)',
  );
  const AGENT = `name: e2e-lsp
description: Asks a language server, for the lsp card's end-to-end test.
instructions: Follow the script.
tools: [read, edit, lsp]
lsp:
  diagnostics_after_edit: true
skills:
  available: []
limits:
  max_steps: 5
review:
  default: allow
`;
  const SCRIPT = `chunk_delay_ms: 0
turns:
  - say: "Where is describe defined?"
    calls:
      - tool: lsp
        args: {operation: definition, path: app.py, line: 3, character: 7}
  - say: "Now a typo, to see the diagnostics."
    calls:
      - tool: edit
        args: {path: app.py, old_string: "print(describe(", new_string: "print(descibe("}
  - say: "It is defined in shapes.py; the typo breaks the call."
`;
  const SHAPES = `"""Shapes and their descriptions."""


class Circle:
    def __init__(self, radius: float) -> None:
        self.radius = radius

    def area(self) -> float:
        return 3.14159 * self.radius * self.radius


def describe(shape: Circle) -> str:
    return f"circle of area {shape.area():.2f}"
`;
  const APP = `from shapes import Circle, describe

print(describe(Circle(2.0)))
`;

  let server: QilinServer | undefined;

  test.beforeAll(async () => {
    server = await startScriptedServer(
      AGENT,
      SCRIPT,
      { 'shapes.py': SHAPES, 'app.py': APP, 'pyrightconfig.json': '{"include": ["."]}\n' },
      { PATH: SERVER_PATH },
    );
  });

  test.afterAll(async () => {
    await server?.stop();
  });

  test('a location of the lsp card opens the sidebar at its line', async ({ page }) => {
    test.setTimeout(120_000);
    if (server === undefined) throw new Error('the server did not start');
    // The session and its turn through the API, with the token; then the page opens on it.
    const call = async (path: string, body: unknown) => {
      const answered = await fetch(`${server?.origin}${path}`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${server?.token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(answered.ok, `POST ${path}: HTTP ${answered.status}`).toBe(true);
      return (await answered.json()) as { id: string };
    };
    const { id } = await call('/api/sessions', {});
    await call(`/api/sessions/${id}/turns`, {
      prompt: 'Where is describe defined?',
      clientTurnId: 'lsp-e2e-1',
    });
    await page.goto(`${server.origin}/sessions/${id}#token=${server.token}`);
    await expect(page.getByText('Turn completed')).toBeVisible({ timeout: 90_000 });

    const row = page.getByRole('button', { name: /Code navigation.*Definition.*app\.py:3:7/ });
    await expect(row).toBeVisible();
    await row.click();
    await expect(row).toHaveAttribute('aria-expanded', 'true');
    const results = page.getByRole('list', { name: 'Results of Definition' });
    await expect(results.locator('.qt-lsp__path')).toHaveText('shapes.py');
    await expect(results).toContainText('def describe(shape: Circle) -> str:');
    const place = results.getByRole('button', { name: 'Open shapes.py at line 12' });
    await expect(place).toHaveText('12:5');
    await place.click();

    const preview = page.getByRole('complementary', { name: 'File preview: shapes.py' });
    await expect(preview).toBeVisible();
    const touched = preview.locator('.qa-file__line[data-touched="true"]');
    await expect(touched).toHaveCount(1);
    await expect(touched).toContainText('def describe(shape: Circle) -> str:');
    await expect(touched.locator('.qa-file__number')).toHaveText('12');
    await expect(touched).toBeInViewport();
    await page.screenshot({ path: test.info().outputPath('lsp-sidebar.png') });

    await preview.getByRole('button', { name: 'Close the preview' }).click();

    // The edit that broke the call carries the new error, linked to its line.
    const edit = page.getByRole('button', { name: /Edit.*app\.py.*1 new problem/ });
    await expect(edit).toBeVisible();
    await edit.click();
    const introduced = page.getByRole('list', { name: 'New' });
    await expect(introduced.locator('li').first()).toHaveAttribute('data-severity', 'error');
    await expect(introduced).toContainText('descibe');
    await expect(introduced.getByRole('button', { name: 'Open app.py at line 3' })).toBeVisible();

    // The header's language servers: pyright, which answered, is ready.
    const servers = page.locator('details.qa-lsp');
    await servers.locator('summary').click();
    await expect(servers.locator('li.qa-lsp__server', { hasText: 'python' })).toHaveAttribute(
      'data-state',
      'ready',
    );
    await expectAccessible(page, '.qa-session-wrap');
  });
});

// The same card on a real `qilin serve` whatever its tools: the scripted model asks `lsp` for a
// definition, and the session's snapshot is given the result a language server recorded (the
// agreed `LspOutput`). The page's card, its link, the host's `openFile` and the sidebar reading
// the workspace file from the server are all real.
test.describe('on a recorded result', () => {
  const AGENT = `name: e2e-lsp-recorded
description: Asks for a definition, for the lsp card's end-to-end test.
instructions: Follow the script.
tools: [read]
skills:
  available: []
limits:
  max_steps: 5
review:
  default: allow
`;
  const SCRIPT = `chunk_delay_ms: 0
turns:
  - calls:
      - tool: lsp
        args: {operation: definition, path: app.py, line: 3, character: 7}
  - say: "It is defined in shapes.py."
`;
  const SHAPES = ['"""Shapes."""', '', '', 'class Circle:', '    radius: float', '']
    .concat(Array.from({ length: 40 }, (_, i) => `# note ${i + 1}`))
    .concat(['', 'def describe(shape: Circle) -> str:', '    return f"circle {shape.radius}"', ''])
    .join('\n');
  /** The line of `def describe` in SHAPES. */
  const LINE = 48;
  const RECORDED: LspOutput = {
    operation: 'definition',
    language: 'python',
    server: 'pyright-langserver',
    path: 'app.py',
    line: 3,
    character: 7,
    items: [
      {
        uri: 'file:///workspace/shapes.py',
        path: 'shapes.py',
        line: LINE,
        character: 5,
        endLine: LINE,
        endCharacter: 13,
        text: 'def describe(shape: Circle) -> str:',
        context: [
          { line: LINE - 1, text: '' },
          { line: LINE, text: 'def describe(shape: Circle) -> str:' },
          { line: LINE + 1, text: '    return f"circle {shape.radius}"' },
        ],
      },
      {
        uri: 'jar:file:///opt/stubs.jar!/shapes.pyi',
        line: 2,
        character: 5,
        text: 'def describe(shape: Circle) -> str: ...',
      },
    ],
    total: 2,
    truncated: false,
  };

  let server: QilinServer | undefined;

  test.beforeAll(async () => {
    server = await startScriptedServer(AGENT, SCRIPT, {
      'shapes.py': SHAPES,
      'app.py': 'from shapes import Circle, describe\n\nprint(describe(Circle()))\n',
    });
  });

  test.afterAll(async () => {
    await server?.stop();
  });

  /** Gives the session's snapshot the recorded result of its `lsp` call. */
  async function recordResult(page: Page) {
    await page.route('**/api/sessions/*/snapshot*', async (route) => {
      const answered = await route.fetch();
      const snapshot = (await answered.json()) as Snapshot;
      let found = 0;
      for (const turn of snapshot.turns) {
        for (const item of turn.items) {
          if (item.type !== 'tool' || item.node.toolName !== 'lsp') continue;
          const node: ToolNode = item.node;
          node.phase = 'done';
          node.outcome = {
            status: 'ok',
            content: [{ type: 'text', text: 'shapes.py:48:5 def describe(shape: Circle) -> str:' }],
            output: RECORDED,
            durationMs: 420,
          };
          found += 1;
        }
      }
      expect(found, 'the snapshot holds the lsp call').toBe(1);
      await route.fulfill({ response: answered, json: snapshot });
    });
  }

  test('a location of the lsp card opens the sidebar at its line', async ({ page }) => {
    if (server === undefined) throw new Error('the server did not start');
    await page.goto(server.url);
    await page.getByRole('button', { name: 'New session' }).click();
    await expect(page).toHaveURL(/\/sessions\//);
    const prompt = page.getByRole('textbox', { name: 'Prompt' });
    await prompt.fill('Where is describe defined?');
    await prompt.press('Enter');
    await expect(page.getByText('Turn completed')).toBeVisible();
    // The session as it is stored, with the result a language server gave.
    await recordResult(page);
    await page.reload();

    const row = page.getByRole('button', { name: /Code navigation.*Definition.*app\.py:3:7/ });
    await expect(row).toBeVisible();
    await row.focus();
    await page.keyboard.press('Enter');
    await expect(row).toHaveAttribute('aria-expanded', 'true');
    const results = page.getByRole('list', { name: 'Results of Definition' });
    await expect(results.locator('.qt-lsp__path')).toHaveText([
      'shapes.py',
      'jar:file:///opt/stubs.jar!/shapes.pyi',
    ]);
    // The other URI is text: nothing to open.
    await expect(results.locator('li.qt-lsp__file').nth(1).getByRole('button')).toHaveCount(0);
    const place = results.getByRole('button', { name: `Open shapes.py at line ${LINE}` });
    await expect(place).toHaveText(`${LINE}:5`);
    await place.focus();
    await page.keyboard.press('Enter');

    const preview = page.getByRole('complementary', { name: 'File preview: shapes.py' });
    await expect(preview).toBeVisible();
    const touched = preview.locator('.qa-file__line[data-touched="true"]');
    await expect(touched).toHaveCount(1);
    await expect(touched).toContainText('def describe(shape: Circle) -> str:');
    await expect(touched.locator('.qa-file__number')).toHaveText(String(LINE));
    await expect(touched).toBeInViewport();
    await page.screenshot({ path: test.info().outputPath('lsp-sidebar.png') });
    await expectAccessible(page, '.qa-session-wrap');
  });
});
