// The `lsp` card model: grouping by file, ordering, links against text, why a result is empty,
// and the fallbacks; the diagnostics an edit carries.
import { describe, expect, test } from 'vitest';
import { madeCall, inputAt } from '../../../../test-support/calls';
import { editModel } from './diff';
import { Fields } from './common';
import {
  editDiagnostics,
  groupRows,
  lspModel,
  lspResult,
  lspRow,
  lspSuffix,
  nestSymbols,
  placeLabel,
  rowLines,
  type LspModel,
} from './lsp';

const CWD = '/home/qilin/workspace';
const HOME = '/home/qilin';

/** An item as the runtime records it, in the workspace unless told. */
function item(path: string | undefined, line: number, more: Record<string, unknown> = {}) {
  return {
    uri:
      path === undefined
        ? 'jar:file:///lib/rt.jar!/java/lang/String.class'
        : `file://${CWD}/${path}`,
    ...(path === undefined ? {} : { path }),
    line,
    character: 5,
    ...more,
  };
}

function output(operation: string, items: unknown[], more: Record<string, unknown> = {}) {
  return { operation, items, total: items.length, truncated: false, ...more };
}

/** The model of an `lsp` call asking `args`, ended `ok` with `out` (running without it). */
function model(args: Record<string, unknown>, out?: unknown) {
  const node = madeCall('call_1', 'lsp', args, out === undefined ? undefined : { output: out });
  const input = { ...inputAt(node, out === undefined ? 'start' : 'result'), cwd: CWD, home: HOME };
  return lspModel(input);
}

function asLsp(value: ReturnType<typeof lspModel>): LspModel {
  if (value.kind !== 'lsp') throw new Error(`expected the lsp card, got ${value.kind}`);
  return value;
}

describe('rows and groups', () => {
  test('references group by file in first-seen order, by line inside a file', () => {
    const rows = [
      item('src/b.py', 30),
      item('src/a.py', 12),
      item('src/b.py', 4),
      item(undefined, 88),
    ].map((value) => lspRow(value));
    const groups = groupRows('references', rows, CWD, HOME);
    expect(groups.map((group) => group.label)).toEqual([
      'src/b.py',
      'src/a.py',
      'jar:file:///lib/rt.jar!/java/lang/String.class',
    ]);
    expect(groups[0]?.rows.map((row) => row.line)).toEqual([4, 30]);
    // A workspace file is a link; another URI is text.
    expect(groups.map((group) => group.path)).toEqual(['src/b.py', 'src/a.py', undefined]);
  });

  test('a file outside the workspace is a shortened path, never a link', () => {
    const row = lspRow({
      uri: `file://${HOME}/.local/lib/python3.12/site-packages/requests/api.py`,
      line: 59,
      character: 5,
    });
    expect(placeLabel(row, CWD, HOME)).toBe(
      '~/.local/lib/python3.12/site-packages/requests/api.py',
    );
    expect(groupRows('definition', [row], CWD, HOME)[0]?.path).toBeUndefined();
    // Escapes in a file URI are decoded for reading.
    expect(placeLabel({ uri: 'file:///opt/my%20lib/x.ts' })).toBe('/opt/my lib/x.ts');
    expect(placeLabel({ uri: 'untitled:Untitled-1' })).toBe('untitled:Untitled-1');
  });

  test('diagnostics list errors first, and the file with the worst first', () => {
    const rows = [
      item('src/ok.py', 3, { severity: 'warning', message: 'unused' }),
      item('src/bad.py', 20, { severity: 'hint', message: 'could be simpler' }),
      item('src/bad.py', 40, { severity: 'error', message: 'undefined name' }),
      item('src/bad.py', 10, { severity: 'error', message: 'wrong type' }),
    ].map((value) => lspRow(value));
    const groups = groupRows('diagnostics', rows);
    expect(groups.map((group) => group.key)).toEqual(['src/bad.py', 'src/ok.py']);
    expect(groups[0]?.rows.map((row) => [row.severity, row.line])).toEqual([
      ['error', 10],
      ['error', 40],
      ['hint', 20],
    ]);
  });

  test('document symbols keep their order and nest by depth', () => {
    const rows = [
      item('src/app.py', 1, { name: 'App', kind: 'class', depth: 0 }),
      item('src/app.py', 3, { name: '__init__', kind: 'method', depth: 1 }),
      item('src/app.py', 9, { name: 'run', kind: 'method', depth: 1 }),
      item('src/app.py', 10, { name: 'inner', kind: 'function', depth: 3 }),
      item('src/app.py', 30, { name: 'main', kind: 'function', depth: 0 }),
    ].map((value) => lspRow(value));
    const tree = nestSymbols(rows);
    expect(tree.map((node) => node.row.name)).toEqual(['App', 'main']);
    expect(tree[0]?.children.map((node) => node.row.name)).toEqual(['__init__', 'run']);
    // Two levels deeper than the symbol before it: under that symbol, its nearest parent.
    expect(tree[0]?.children[1]?.children.map((node) => node.row.name)).toEqual(['inner']);
    expect(groupRows('document_symbols', rows)[0]?.symbols).toEqual(tree);
  });

  test('the lines a row opens at', () => {
    expect(rowLines({ line: 12 })).toEqual({ first: 12, last: 12 });
    expect(rowLines({ line: 12, endLine: 15 })).toEqual({ first: 12, last: 15 });
    expect(rowLines({ line: 12, endLine: 3 })).toEqual({ first: 12, last: 12 });
  });

  test('an item of another shape is refused', () => {
    expect(() => lspRow({ uri: 'file:///a', line: 0, character: 1 })).toThrow(/counts from 1/);
    expect(() => lspRow({ uri: '', line: 1, character: 1 })).toThrow(/uri is empty/);
    expect(() => lspRow(item('a.py', 1, { severity: 'fatal' }))).toThrow(/severity/);
  });
});

describe('the card', () => {
  test('running: the operation and its target', () => {
    const card = asLsp(
      model({ operation: 'definition', path: 'src/app.py', line: 12, character: 9 }),
    );
    expect(card).toMatchObject({
      operation: 'definition',
      target: 'src/app.py:12:9',
      state: 'running',
    });
    expect(asLsp(model({ operation: 'workspace_symbols', query: 'parse' })).target).toBe('“parse”');
    expect(asLsp(model({ operation: 'document_symbols', path: `${CWD}/src/app.py` })).target).toBe(
      'src/app.py',
    );
  });

  test('a definition keeps its context lines', () => {
    const context = [
      { line: 11, text: '' },
      { line: 12, text: 'def parse(text: str) -> Doc:' },
      { line: 13, text: '    return Doc(text)' },
    ];
    const card = asLsp(
      model(
        { operation: 'definition', path: 'src/main.py', line: 4, character: 10 },
        output('definition', [item('src/parse.py', 12, { text: context[1]?.text, context })]),
      ),
    );
    expect(card.result?.groups[0]?.rows[0]?.context).toEqual(context);
    expect(lspSuffix(card.result as NonNullable<LspModel['result']>)).toEqual([
      { key: 'lsp.count.results', values: { count: 1 } },
    ]);
  });

  test.each([
    ['no_server', 'No language server for python.', 'npm install -g pyright'],
    ['starting', 'pyright is indexing: 120/480 files', undefined],
    ['timed_out', 'pyright did not answer in 10 s.', undefined],
    ['crashed', 'pyright exited (signal 9); the next call restarts it.', undefined],
    ['not_found', 'No definition at src/app.py:3:1.', undefined],
  ])('an empty result says why: %s', (reason, text, hint) => {
    const empty = { reason, message: text, ...(hint === undefined ? {} : { hint }) };
    const card = asLsp(
      model(
        { operation: 'definition', path: 'src/app.py', line: 3, character: 1 },
        output('definition', [], { empty }),
      ),
    );
    expect(card.result?.empty).toEqual(empty);
    expect(card.result?.groups).toEqual([]);
    expect(lspSuffix(card.result as NonNullable<LspModel['result']>)).toEqual([
      { key: `lsp.empty.${reason}` },
    ]);
  });

  test('empty lists are left out on the wire', () => {
    const card = asLsp(
      model(
        { operation: 'definition', path: 'src/app.py', line: 3, character: 1 },
        {
          operation: 'definition',
          empty: { reason: 'not_found', message: 'Nothing.' },
          total: 0,
          truncated: false,
        },
      ),
    );
    expect(card.result?.groups).toEqual([]);
    const read = editDiagnostics(
      new Fields({ diagnostics: { server: 'pyright-langserver', remaining: 0 } }, 'output'),
    );
    expect(read).toEqual({
      server: 'pyright-langserver',
      introduced: [],
      resolved: [],
      remaining: 0,
    });
  });

  test('a hover is its Markdown', () => {
    const card = asLsp(
      model(
        { operation: 'hover', path: 'src/app.py', line: 3, character: 8 },
        output('hover', [], { hover: '```python\ndef parse(text: str) -> Doc\n```\nParses.' }),
      ),
    );
    expect(card.result?.hover).toContain('def parse');
    expect(lspSuffix(card.result as NonNullable<LspModel['result']>)).toEqual([]);
  });

  test('diagnostics are counted by severity; many files say so', () => {
    const diagnostics = asLsp(
      model(
        { operation: 'diagnostics', path: 'src/app.py' },
        output('diagnostics', [
          item('src/app.py', 3, { severity: 'error', message: 'x' }),
          item('src/app.py', 4, { severity: 'warning', message: 'y' }),
          item('src/app.py', 5, { severity: 'warning', message: 'z' }),
        ]),
      ),
    );
    expect(diagnostics.result?.severities).toEqual({
      error: 1,
      warning: 2,
      information: 0,
      hint: 0,
    });
    expect(lspSuffix(diagnostics.result as NonNullable<LspModel['result']>)).toEqual([
      { key: 'lsp.count.errors', values: { count: 1 } },
      { key: 'lsp.count.warnings', values: { count: 2 } },
    ]);
    const references = asLsp(
      model(
        { operation: 'references', path: 'src/app.py', line: 1, character: 5 },
        output('references', [item('a.py', 1), item('b.py', 2)], { total: 240, truncated: true }),
      ),
    );
    expect(lspSuffix(references.result as NonNullable<LspModel['result']>)).toEqual([
      { key: 'lsp.count.inFiles', values: { results: 240, files: 2 } },
    ]);
  });

  test('cut results keep the spill file', () => {
    const card = asLsp(
      model(
        { operation: 'workspace_symbols', query: 'get' },
        output('workspace_symbols', [item('a.py', 1, { name: 'get', kind: 'function' })], {
          total: 900,
          truncated: true,
          spill: { path: '/home/qilin/.qilin/spill/lsp-1.txt', totalBytes: 48_000 },
        }),
      ),
    );
    expect(card.result).toMatchObject({
      count: 1,
      total: 900,
      truncated: true,
      spill: { path: '/home/qilin/.qilin/spill/lsp-1.txt', totalBytes: 48_000 },
    });
  });

  test('a failed call shows its input and error in the card', () => {
    const node = madeCall(
      'call_1',
      'lsp',
      { operation: 'definition', path: '../etc/passwd', line: 1, character: 1 },
      { status: 'error', text: 'The path ../etc/passwd is outside the workspace.' },
    );
    const card = asLsp(lspModel(inputAt(node)));
    expect(card.body).toMatchObject({
      kind: 'plain',
      output: 'The path ../etc/passwd is outside the workspace.',
    });
  });

  test.each([
    ['an unknown operation', { operation: 'rename' }, output('definition', [item('a.py', 1)])],
    [
      'another operation than asked',
      { operation: 'references', path: 'a.py', line: 1, character: 1 },
      output('definition', [item('a.py', 1)]),
    ],
    [
      'an empty result that says not why',
      { operation: 'definition', path: 'a.py', line: 1, character: 1 },
      output('definition', []),
    ],
    [
      'a reason beside results',
      { operation: 'definition', path: 'a.py', line: 1, character: 1 },
      output('definition', [item('a.py', 1)], { empty: { reason: 'not_found', message: 'x' } }),
    ],
  ])('%s falls back to the generic card', (_, args, out) => {
    expect(model(args, out).kind).toBe('generic');
  });

  test('lspResult reads a recorded output on its own', () => {
    expect(
      lspResult(output('references', [item('a.py', 1), item('a.py', 9)])).groups[0]?.rows,
    ).toHaveLength(2);
  });
});

describe('diagnostics an edit carried', () => {
  const carried = {
    server: 'pyright-langserver',
    introduced: [
      item('src/app.py', 9, { severity: 'warning', message: 'unused import' }),
      item('src/app.py', 14, { severity: 'error', message: '"prase" is not defined' }),
    ],
    resolved: [item('src/app.py', 3, { severity: 'error', message: 'missing argument' })],
    remaining: 4,
    note: 'the server answered in 1.2 s',
  };

  test('errors first, resolved ones kept, the count and note', () => {
    const read = editDiagnostics(new Fields({ diagnostics: carried }, 'output'));
    expect(read?.introduced.map((row) => row.severity)).toEqual(['error', 'warning']);
    expect(read?.resolved).toHaveLength(1);
    expect(read).toMatchObject({ server: 'pyright-langserver', remaining: 4, note: carried.note });
    expect(editDiagnostics(new Fields({}, 'output'))).toBeUndefined();
  });

  test('the edit card carries them; a malformed block falls back', () => {
    const args = { path: 'src/app.py', old_string: 'a', new_string: 'b' };
    const diff = '@@ -1,1 +1,1 @@\n-a\n+b\n';
    const done = (diagnostics: unknown) =>
      editModel(
        inputAt(
          madeCall('call_2', 'edit', args, {
            output: { diff, added: 1, removed: 1, diagnostics },
          }),
        ),
      );
    const card = done(carried);
    expect(card.kind === 'diff' && card.diagnostics?.introduced[0]?.message).toBe(
      '"prase" is not defined',
    );
    expect(done({ server: 'x', introduced: 'many' }).kind).toBe('generic');
  });
});
