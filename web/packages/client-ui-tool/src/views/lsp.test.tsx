// The `lsp` card and the edit cards' diagnostics as a reader sees them: rendered through the
// tree, expanded.
import { fireEvent, screen, within } from '@testing-library/react';
import type { Locale } from '@qilin-agent/i18n';
import type { ToolNode } from '@qilin-agent/protocol';
import { SlotRegistry, SlotsProvider } from '@qilin-agent/slots';
import { describe, expect, test, vi } from 'vitest';
import { madeCall } from '../../../../test-support/calls';
import { renderWithI18n } from '../../../../test-support/render';
import { registerBuiltinToolViews } from '../register';
import type { FileLines } from '../slots';
import { ToolCallTree } from '../tree/ToolCallTree';

const CWD = '/home/qilin/workspace';

/** Renders a call's card, opened. */
function open(
  node: ToolNode,
  options: {
    locale?: Locale;
    openFile?: (path: string, lines?: FileLines) => void;
    inspect?: (callId: string) => void;
  } = {},
) {
  const registry = new SlotRegistry();
  registerBuiltinToolViews({ slots: registry });
  const rendered = renderWithI18n(
    <SlotsProvider registry={registry}>
      <ToolCallTree
        node={node}
        cwd={CWD}
        home="/home/qilin"
        {...(options.openFile === undefined ? {} : { openFile: options.openFile })}
        {...(options.inspect === undefined ? {} : { inspect: options.inspect })}
      />
    </SlotsProvider>,
    options.locale ?? 'en',
  );
  const row = rendered.container.querySelector<HTMLButtonElement>('button.qp-row__main');
  if (row !== null) fireEvent.click(row);
  return rendered;
}

function lsp(args: Record<string, unknown>, output?: Record<string, unknown>): ToolNode {
  return madeCall('call_7', 'lsp', args, output === undefined ? undefined : { output });
}

const REFERENCES = lsp(
  { operation: 'references', path: 'src/parse.py', line: 12, character: 5 },
  {
    operation: 'references',
    language: 'python',
    server: 'pyright-langserver',
    items: [
      {
        uri: `file://${CWD}/src/parse.py`,
        path: 'src/parse.py',
        line: 12,
        character: 5,
        text: 'def parse(text: str) -> Doc:',
      },
      {
        uri: `file://${CWD}/src/app.py`,
        path: 'src/app.py',
        line: 40,
        character: 12,
        endLine: 40,
        text: '    doc = parse(body)',
      },
      {
        uri: 'jar:file:///opt/vendor/lib.jar!/Parse.class',
        line: 3,
        character: 1,
        text: 'parse(String)',
      },
    ],
    total: 3,
    truncated: false,
  },
);

describe('the lsp card', () => {
  test('locations grouped by file: workspace files open at their line, other URIs are text', () => {
    const openFile = vi.fn();
    open(REFERENCES, { openFile });
    expect(
      screen.getByRole('button', { name: /Code navigation.*References.*src\/parse\.py:12:5/ }),
    );
    const results = screen.getByRole('list', { name: 'Results of References' });
    const files = within(results)
      .getAllByRole('listitem')
      .filter((li) => li.matches('.qt-lsp__file'));
    expect(files.map((li) => li.querySelector('.qt-lsp__path')?.textContent)).toEqual([
      'src/parse.py',
      'src/app.py',
      'jar:file:///opt/vendor/lib.jar!/Parse.class',
    ]);
    fireEvent.click(screen.getByRole('button', { name: 'Open src/app.py at line 40' }));
    expect(openFile).toHaveBeenLastCalledWith('src/app.py', { first: 40, last: 40 });
    // The file's header opens it at its first location.
    fireEvent.click(screen.getByRole('button', { name: 'Open src/parse.py' }));
    expect(openFile).toHaveBeenLastCalledWith('src/parse.py', { first: 12, last: 12 });
    // The URI that is not a workspace file: its place and header are text, not buttons.
    const other = files[2] as HTMLElement;
    expect(within(other).queryByRole('button')).toBeNull();
    expect(other).toHaveTextContent('3:1');
    expect(other).toHaveTextContent('parse(String)');
    expect(screen.getByText('doc = parse(body)')).toBeInTheDocument();
    expect(screen.getByText('Answered by pyright-langserver (python)')).toBeInTheDocument();
  });

  test('without the host callback, every place is text', () => {
    open(REFERENCES);
    expect(screen.queryByRole('button', { name: /^Open / })).toBeNull();
    expect(screen.getAllByText('12:5').length).toBeGreaterThan(0);
  });

  test('a definition shows its context, its own line marked', () => {
    open(
      lsp(
        { operation: 'definition', path: 'src/app.py', line: 40, character: 12 },
        {
          operation: 'definition',
          items: [
            {
              uri: `file://${CWD}/src/parse.py`,
              path: 'src/parse.py',
              line: 12,
              character: 5,
              text: 'def parse(text: str) -> Doc:',
              context: [
                { line: 11, text: '@cache' },
                { line: 12, text: 'def parse(text: str) -> Doc:' },
                { line: 13, text: '    return Doc(text)' },
              ],
            },
          ],
          total: 1,
          truncated: false,
        },
      ),
    );
    const context = screen.getByLabelText('Lines around the definition in src/parse.py');
    expect(context).toHaveTextContent('@cache');
    expect(context.querySelector('[data-target="true"]')).toHaveTextContent(
      '12def parse(text: str) -> Doc:',
    );
  });

  test('symbols with their kind, nested', () => {
    open(
      lsp(
        { operation: 'document_symbols', path: 'src/app.py' },
        {
          operation: 'document_symbols',
          items: [
            {
              uri: 'file:///w/src/app.py',
              path: 'src/app.py',
              line: 1,
              character: 7,
              name: 'App',
              kind: 'class',
              depth: 0,
            },
            {
              uri: 'file:///w/src/app.py',
              path: 'src/app.py',
              line: 3,
              character: 9,
              name: 'run',
              kind: 'method',
              detail: '(self) -> None',
              depth: 1,
            },
            {
              uri: 'file:///w/src/app.py',
              path: 'src/app.py',
              line: 20,
              character: 1,
              name: 'LIMIT',
              kind: 'type_parameter',
              depth: 0,
            },
            {
              uri: 'file:///w/src/app.py',
              path: 'src/app.py',
              line: 22,
              character: 1,
              name: 'odd',
              kind: 'macro_rule',
              depth: 0,
            },
          ],
          total: 4,
          truncated: false,
        },
      ),
      { locale: 'zh-CN' },
    );
    const top = screen.getByRole('list', { name: 'src/app.py 的符号' });
    const app = within(top).getByText('App').closest('li') as HTMLElement;
    expect(app).toHaveTextContent('类');
    const inner = within(app).getByRole('list');
    expect(within(inner).getByText('run').closest('li')).toHaveTextContent('方法');
    expect(within(inner).getByText('(self) -> None')).toBeInTheDocument();
    expect(screen.getByText('类型参数')).toBeInTheDocument();
    // A kind the catalogue does not name shows as sent, readable.
    expect(screen.getByText('macro rule')).toBeInTheDocument();
  });

  test('diagnostics: errors first, severity in words beside the colour', () => {
    open(
      lsp(
        { operation: 'diagnostics', path: 'src/app.py' },
        {
          operation: 'diagnostics',
          items: [
            {
              uri: 'file:///w/src/app.py',
              path: 'src/app.py',
              line: 2,
              character: 1,
              severity: 'warning',
              message: 'unused import os',
              source: 'Pyright',
            },
            {
              uri: 'file:///w/src/app.py',
              path: 'src/app.py',
              line: 9,
              character: 5,
              severity: 'error',
              message: '"prase" is not defined',
              source: 'Pyright',
              code: 'reportUndefinedVariable',
            },
          ],
          total: 2,
          truncated: false,
        },
      ),
    );
    const rows = document.querySelectorAll('.qt-lsp__row');
    expect([...rows].map((row) => row.getAttribute('data-severity'))).toEqual(['error', 'warning']);
    expect(rows[0]).toHaveTextContent('error');
    expect(rows[0]).toHaveTextContent('Pyright · code reportUndefinedVariable');
    expect(screen.getByRole('button', { name: /Diagnostics.*1 error · 1 warning/ }));
  });

  test('a hover is rendered as Markdown', () => {
    open(
      lsp(
        { operation: 'hover', path: 'src/app.py', line: 9, character: 5 },
        {
          operation: 'hover',
          items: [],
          hover:
            '**parse**(text: str) -> Doc\n\nParses a document. See [the spec](https://example.com/spec).',
          total: 0,
          truncated: false,
        },
      ),
    );
    const hover = screen.getByRole('group', { name: 'Documentation' });
    expect(within(hover).getByText('parse').tagName).toBe('STRONG');
    expect(within(hover).getByRole('link', { name: 'the spec' })).toHaveAttribute(
      'href',
      'https://example.com/spec',
    );
  });

  test.each([
    ['no_server', 'No language server for this file', 'no language server', true],
    ['starting', 'The language server is still starting or indexing', 'server starting', false],
    ['timed_out', 'The language server did not answer in time', 'timed out', true],
    ['crashed', 'The language server crashed; the next call restarts it', 'server crashed', true],
    ['not_found', 'The language server found nothing there', 'nothing found', false],
  ])('an empty result says why: %s', (reason, title, said, capsule) => {
    const hint = reason === 'no_server' ? 'npm install -g pyright' : undefined;
    const { container } = open(
      lsp(
        { operation: 'definition', path: 'src/app.py', line: 1, character: 1 },
        {
          operation: 'definition',
          items: [],
          empty: { reason, message: `The runtime says: ${reason}`, ...(hint ? { hint } : {}) },
          total: 0,
          truncated: false,
        },
      ),
    );
    expect(screen.getByText(title)).toBeInTheDocument();
    expect(screen.getByText(`The runtime says: ${reason}`)).toBeInTheDocument();
    if (hint !== undefined) expect(screen.getByText(hint).tagName).toBe('CODE');
    expect(container.querySelector('.qp-capsule') !== null).toBe(capsule);
    expect(container.querySelector('.qp-row')).toHaveTextContent(said);
  });

  test('cut results say how many, and open the spill file', () => {
    const openFile = vi.fn();
    open(
      lsp(
        { operation: 'workspace_symbols', query: 'get' },
        {
          operation: 'workspace_symbols',
          items: [
            {
              uri: 'file:///w/a.py',
              path: 'a.py',
              line: 1,
              character: 5,
              name: 'get',
              kind: 'function',
            },
          ],
          total: 900,
          truncated: true,
          spill: { path: '/home/qilin/.qilin/spill/lsp.txt', totalBytes: 48_000 },
        },
      ),
      { openFile },
    );
    expect(screen.getByText(/Showing 1 of 900 results/)).toBeInTheDocument();
    fireEvent.click(screen.getByRole('button', { name: /All results saved to/ }));
    expect(openFile).toHaveBeenCalledWith('/home/qilin/.qilin/spill/lsp.txt');
  });

  test('a failed call keeps its input and error; data of another shape is the generic card', () => {
    const inspect = vi.fn();
    open(
      madeCall(
        'call_7',
        'lsp',
        { operation: 'definition', path: '../secret.py', line: 1, character: 1 },
        { status: 'error', text: 'The path ../secret.py is outside the workspace.' },
      ),
      { inspect },
    );
    expect(screen.getByText('The path ../secret.py is outside the workspace.')).toBeInTheDocument();
    fireEvent.click(screen.getByRole('button', { name: 'Inspect the call call_7' }));
    expect(inspect).toHaveBeenCalledWith('call_7');
  });

  test('an unsupported result falls back to the generic card, Inspect kept', () => {
    open(lsp({ operation: 'definition', path: 'a.py', line: 1, character: 1 }, { items: 'none' }), {
      inspect: vi.fn(),
    });
    expect(screen.getByRole('button', { name: /Tool call · lsp/ })).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Inspect the call call_7' })).toBeInTheDocument();
  });
});

describe('edit cards carry diagnostics', () => {
  const diagnostics = {
    server: 'pyright-langserver',
    introduced: [
      {
        uri: 'file:///w/src/app.py',
        path: 'src/app.py',
        line: 4,
        character: 1,
        severity: 'warning',
        message: 'unused import os',
      },
      {
        uri: 'file:///w/src/app.py',
        path: 'src/app.py',
        line: 14,
        character: 9,
        severity: 'error',
        message: '"prase" is not defined',
      },
    ],
    resolved: [
      {
        uri: 'file:///w/src/app.py',
        path: 'src/app.py',
        line: 3,
        character: 1,
        severity: 'error',
        message: 'missing argument "text"',
      },
    ],
    remaining: 3,
    note: 'the server answered in 1.2 s',
  };

  test('introduced errors first, resolved marked gone, the count and the note', () => {
    const openFile = vi.fn();
    open(
      madeCall(
        'call_3',
        'edit',
        { path: 'src/app.py', old_string: 'parse(', new_string: 'prase(' },
        {
          output: {
            diff: '@@ -14,1 +14,1 @@\n-x = parse(y)\n+x = prase(y)\n',
            added: 1,
            removed: 1,
            diagnostics,
          },
        },
      ),
      { openFile },
    );
    expect(screen.getByRole('button', { name: /Edit.*2 new problems/ })).toBeInTheDocument();
    const block = screen.getByRole('group', { name: 'Diagnostics after the edit' });
    const introduced = within(block).getByRole('list', { name: 'New' });
    expect(
      within(introduced)
        .getAllByRole('listitem')
        .map((li) => li.dataset.severity),
    ).toEqual(['error', 'warning']);
    const resolved = within(block).getByRole('list', { name: 'Gone' });
    expect(resolved).toHaveTextContent('missing argument "text"');
    expect(resolved).toHaveTextContent('gone');
    expect(block).toHaveTextContent(
      '3 diagnostics in the file now (pyright-langserver) · the server answered in 1.2 s',
    );
    fireEvent.click(within(introduced).getByRole('button', { name: 'Open src/app.py at line 14' }));
    expect(openFile).toHaveBeenCalledWith('src/app.py', { first: 14, last: 14 });
  });

  test('a write that fixed everything says so', () => {
    open(
      madeCall(
        'call_4',
        'write',
        { path: 'src/app.py', content: 'print(1)\n' },
        {
          output: {
            action: 'replaced',
            diagnostics: { ...diagnostics, introduced: [], resolved: [], remaining: 0 },
          },
        },
      ),
      { locale: 'zh-CN' },
    );
    expect(screen.getByRole('group', { name: '编辑后的诊断' })).toHaveTextContent('没有新问题。');
  });

  test('a change without diagnostics shows no block', () => {
    open(
      madeCall(
        'call_5',
        'write',
        { path: 'src/app.py', content: 'print(1)\n' },
        { output: { action: 'created' } },
      ),
    );
    expect(screen.queryByRole('group', { name: 'Diagnostics after the edit' })).toBeNull();
  });
});
