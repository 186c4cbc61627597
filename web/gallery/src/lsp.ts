import { callMaker, type FamilyCase } from './familyCases';

const WORKSPACE = '/home/qilin/workspace';

/** A location in a workspace file, as the runtime records it. */
function at(path: string, line: number, character: number, more: Record<string, unknown> = {}) {
  return { uri: `file://${WORKSPACE}/${path}`, path, line, character, ...more };
}

/** A recorded `LspOutput` of `operation` with `items`. */
function answered(operation: string, items: unknown[], more: Record<string, unknown> = {}) {
  return {
    operation,
    language: 'python',
    server: 'pyright-langserver',
    items,
    total: items.length,
    truncated: false,
    ...more,
  };
}

/** A recorded empty result of `operation`, saying why. */
function empty(operation: string, reason: string, message: string, hint?: string) {
  return {
    operation,
    language: 'python',
    ...(reason === 'no_server' ? {} : { server: 'pyright-langserver' }),
    items: [],
    empty: { reason, message, ...(hint === undefined ? {} : { hint }) },
    total: 0,
    truncated: false,
  };
}

const node = callMaker({
  errorCode: 'INVALID_ARGUMENTS',
  text: 'Recorded result.',
  durationMs: 240,
});

const AT_CALL = { path: 'src/app.py', line: 14, character: 11 };

/** The diagnostics an edit that broke a call carried. */
const BROKE = {
  server: 'pyright-langserver',
  introduced: [
    at('src/app.py', 3, 8, {
      severity: 'warning',
      message: 'Import "os" is not accessed',
      source: 'Pyright',
    }),
    at('src/app.py', 14, 11, {
      endLine: 14,
      endCharacter: 16,
      severity: 'error',
      message: '"prase" is not defined',
      source: 'Pyright',
      code: 'reportUndefinedVariable',
    }),
  ],
  resolved: [
    at('src/app.py', 22, 5, {
      severity: 'error',
      message: 'Argument missing for parameter "strict"',
      source: 'Pyright',
    }),
  ],
  remaining: 4,
  note: 'the server reported in 0.8 s',
};

/** Every `lsp` card in its states, and edit cards with the diagnostics they carried. */
export const LSP_CASES: readonly FamilyCase[] = [
  { id: 'lsp-preparing', node: node('call_l1', 'lsp', 'preparing') },
  {
    id: 'lsp-running',
    node: node('call_l2', 'lsp', 'running', { operation: 'definition', ...AT_CALL }),
  },
  {
    id: 'lsp-definition',
    node: node(
      'call_l3',
      'lsp',
      'done',
      { operation: 'definition', ...AT_CALL },
      {
        status: 'ok',
        output: answered('definition', [
          at('src/parse.py', 12, 5, {
            endLine: 12,
            endCharacter: 10,
            text: 'def parse(text: str, strict: bool = False) -> Doc:',
            context: [
              { line: 10, text: '' },
              { line: 11, text: '@lru_cache(maxsize=128)' },
              { line: 12, text: 'def parse(text: str, strict: bool = False) -> Doc:' },
              { line: 13, text: '    """Parses a document; strict mode refuses unknown keys."""' },
              { line: 14, text: '    tokens = lex(text)' },
            ],
          }),
        ]),
      },
    ),
  },
  {
    id: 'lsp-references',
    node: node(
      'call_l4',
      'lsp',
      'done',
      { operation: 'references', path: 'src/parse.py', line: 12, character: 5 },
      {
        status: 'ok',
        output: answered('references', [
          at('src/app.py', 14, 11, { text: '    doc = parse(body, strict=True)' }),
          at('src/app.py', 31, 16, { text: '        return parse(cached)' }),
          at('src/parse.py', 12, 5, { text: 'def parse(text: str, strict: bool = False) -> Doc:' }),
          at('tests/test_parse.py', 7, 12, { text: '    assert parse("a: 1").keys() == ["a"]' }),
          {
            uri: 'file:///home/qilin/.local/lib/python3.12/site-packages/docs/__init__.py',
            line: 3,
            character: 22,
            text: 'from app.parse import parse',
          },
          {
            uri: 'untitled:Untitled-1',
            line: 1,
            character: 1,
            text: 'parse("draft")',
          },
        ]),
      },
    ),
  },
  {
    id: 'lsp-hover',
    node: node(
      'call_l5',
      'lsp',
      'done',
      { operation: 'hover', ...AT_CALL },
      {
        status: 'ok',
        output: answered('hover', [], {
          hover:
            '```python\n(function) def parse(text: str, strict: bool = False) -> Doc\n```\n---\nParses a document; **strict** mode refuses unknown keys.\n\nSee [the format](https://example.com/format).',
        }),
      },
    ),
  },
  {
    id: 'lsp-document-symbols',
    node: node(
      'call_l6',
      'lsp',
      'done',
      { operation: 'document_symbols', path: 'src/parse.py' },
      {
        status: 'ok',
        output: answered('document_symbols', [
          at('src/parse.py', 5, 7, { name: 'Doc', kind: 'class', depth: 0 }),
          at('src/parse.py', 6, 5, {
            name: 'keys',
            kind: 'method',
            detail: '(self) -> list[str]',
            depth: 1,
          }),
          at('src/parse.py', 8, 5, { name: 'body', kind: 'property', depth: 1 }),
          at('src/parse.py', 12, 5, {
            name: 'parse',
            kind: 'function',
            detail: '(text: str, strict: bool = False) -> Doc',
            depth: 0,
          }),
          at('src/parse.py', 14, 5, { name: 'tokens', kind: 'variable', depth: 1 }),
          at('src/parse.py', 30, 1, { name: 'MAX_DEPTH', kind: 'constant', depth: 0 }),
        ]),
      },
    ),
  },
  {
    id: 'lsp-workspace-symbols',
    node: node(
      'call_l7',
      'lsp',
      'done',
      { operation: 'workspace_symbols', query: 'parse' },
      {
        status: 'ok',
        output: answered(
          'workspace_symbols',
          [
            at('src/parse.py', 12, 5, { name: 'parse', kind: 'function' }),
            at('src/parse.py', 40, 5, { name: 'parse_line', kind: 'function' }),
            at('src/cli.py', 3, 7, { name: 'ParseError', kind: 'class', detail: 'app.cli' }),
          ],
          {
            total: 214,
            truncated: true,
            spill: {
              path: '/home/qilin/.qilin/sessions/ses_1/spill/lsp-call_l7.txt',
              totalBytes: 18_400,
            },
          },
        ),
      },
    ),
  },
  {
    id: 'lsp-implementation',
    node: node(
      'call_l8',
      'lsp',
      'done',
      { operation: 'implementation', path: 'src/store.py', line: 4, character: 7 },
      {
        status: 'ok',
        output: answered('implementation', [
          at('src/store_sqlite.py', 9, 7, { text: 'class SqliteStore(Store):' }),
          at('src/store_memory.py', 5, 7, { text: 'class MemoryStore(Store):' }),
        ]),
      },
    ),
  },
  {
    id: 'lsp-incoming-calls',
    node: node(
      'call_l9',
      'lsp',
      'done',
      { operation: 'incoming_calls', path: 'src/parse.py', line: 12, character: 5 },
      {
        status: 'ok',
        output: answered('incoming_calls', [
          at('src/app.py', 10, 5, {
            name: 'handle',
            kind: 'function',
            detail: 'app',
            text: 'def handle(body: bytes) -> Response:',
          }),
          at('src/app.py', 29, 9, {
            name: 'Cache.load',
            kind: 'method',
            detail: 'app.Cache',
            text: '    def load(self, key: str) -> Doc:',
          }),
        ]),
      },
    ),
  },
  {
    id: 'lsp-outgoing-calls',
    node: node(
      'call_l10',
      'lsp',
      'done',
      { operation: 'outgoing_calls', path: 'src/parse.py', line: 12, character: 5 },
      {
        status: 'ok',
        output: answered('outgoing_calls', [
          at('src/parse.py', 44, 5, { name: 'lex', kind: 'function', text: 'def lex(text: str):' }),
          {
            uri: 'file:///usr/lib/python3.12/functools.py',
            line: 481,
            character: 5,
            name: 'lru_cache',
            kind: 'function',
            detail: 'functools',
          },
        ]),
      },
    ),
  },
  {
    id: 'lsp-diagnostics',
    node: node(
      'call_l11',
      'lsp',
      'done',
      { operation: 'diagnostics', path: 'src/app.py' },
      {
        status: 'ok',
        output: answered('diagnostics', [
          at('src/app.py', 3, 8, {
            severity: 'warning',
            message: 'Import "os" is not accessed',
            source: 'Pyright',
          }),
          at('src/app.py', 14, 11, {
            severity: 'error',
            message: '"prase" is not defined',
            source: 'Pyright',
            code: 'reportUndefinedVariable',
          }),
          at('src/app.py', 18, 1, {
            severity: 'information',
            message: 'Code is unreachable',
            source: 'Pyright',
          }),
          at('src/app.py', 20, 9, { severity: 'hint', message: '"tmp" is not accessed' }),
        ]),
      },
    ),
  },
  {
    id: 'lsp-no-server',
    node: node(
      'call_l12',
      'lsp',
      'done',
      { operation: 'definition', ...AT_CALL },
      {
        status: 'ok',
        output: empty(
          'definition',
          'no_server',
          'No language server for python: neither pyright-langserver nor basedpyright-langserver is on PATH.',
          'npm install -g pyright',
        ),
      },
    ),
  },
  {
    id: 'lsp-starting',
    node: node(
      'call_l13',
      'lsp',
      'done',
      { operation: 'references', ...AT_CALL },
      {
        status: 'ok',
        output: empty(
          'references',
          'starting',
          'pyright-langserver is indexing the workspace (Analyzing 120 of 480 files); try again shortly.',
        ),
      },
    ),
  },
  {
    id: 'lsp-timed-out',
    node: node(
      'call_l14',
      'lsp',
      'done',
      { operation: 'workspace_symbols', query: 'Store' },
      {
        status: 'ok',
        output: empty(
          'workspace_symbols',
          'timed_out',
          'pyright-langserver did not answer within 10 s.',
        ),
      },
    ),
  },
  {
    id: 'lsp-crashed',
    node: node(
      'call_l15',
      'lsp',
      'done',
      { operation: 'hover', ...AT_CALL },
      {
        status: 'ok',
        output: empty(
          'hover',
          'crashed',
          'pyright-langserver exited during the request (killed by SIGKILL); the next call restarts it.',
        ),
      },
    ),
  },
  {
    id: 'lsp-not-found',
    node: node(
      'call_l16',
      'lsp',
      'done',
      { operation: 'definition', path: 'src/app.py', line: 1, character: 1 },
      {
        status: 'ok',
        output: empty('definition', 'not_found', 'No definition at src/app.py:1:1.'),
      },
    ),
  },
  {
    id: 'lsp-failed',
    node: node(
      'call_l17',
      'lsp',
      'done',
      { operation: 'definition', path: '../secrets/keys.py', line: 1, character: 1 },
      {
        status: 'error',
        text: 'The path ../secrets/keys.py is outside the workspace /home/qilin/workspace.',
      },
    ),
  },
  {
    id: 'lsp-malformed',
    node: node(
      'call_l18',
      'lsp',
      'done',
      { operation: 'definition', ...AT_CALL },
      {
        status: 'ok',
        output: { operation: 'definition', items: 'src/parse.py:12' },
        text: 'src/parse.py:12:5',
      },
    ),
  },
  {
    id: 'edit-diagnostics',
    node: node(
      'call_l19',
      'edit',
      'done',
      { path: 'src/app.py', old_string: 'parse(body, strict=True)', new_string: 'prase(body)' },
      {
        status: 'ok',
        output: {
          diff: '@@ -13,3 +13,3 @@\n def handle(body: bytes) -> Response:\n-    doc = parse(body, strict=True)\n+    doc = prase(body)\n     return Response(doc)\n',
          added: 1,
          removed: 1,
          diagnostics: BROKE,
        },
      },
    ),
  },
  {
    id: 'edit-diagnostics-fixed',
    node: node(
      'call_l20',
      'edit',
      'done',
      { path: 'src/app.py', old_string: 'prase(body)', new_string: 'parse(body, strict=True)' },
      {
        status: 'ok',
        output: {
          diff: '@@ -13,3 +13,3 @@\n def handle(body: bytes) -> Response:\n-    doc = prase(body)\n+    doc = parse(body, strict=True)\n     return Response(doc)\n',
          added: 1,
          removed: 1,
          diagnostics: {
            server: 'pyright-langserver',
            introduced: [],
            resolved: [BROKE.introduced[1]],
            remaining: 1,
          },
        },
      },
    ),
  },
  {
    id: 'write-diagnostics',
    node: node(
      'call_l21',
      'write',
      'done',
      { path: 'src/extra.py', content: 'from app import prase\n\nprase("x")\n' },
      {
        status: 'ok',
        output: {
          action: 'created',
          diagnostics: {
            server: 'pyright-langserver',
            introduced: [
              at('src/extra.py', 1, 17, {
                severity: 'error',
                message: '"prase" is unknown import symbol',
                source: 'Pyright',
              }),
            ],
            resolved: [],
            remaining: 1,
            note: 'the server did not report within 3 s; these are its last diagnostics',
          },
        },
      },
    ),
  },
  {
    id: 'str_replace_editor-diagnostics',
    node: node(
      'call_l22',
      'str_replace_editor',
      'done',
      { command: 'str_replace', path: 'src/app.py', old_str: 'import os\n', new_str: '' },
      {
        status: 'ok',
        output: {
          diff: '@@ -1,4 +1,3 @@\n from app.parse import parse\n-import os\n \n def handle(body: bytes) -> Response:\n',
          added: 0,
          removed: 1,
          diagnostics: {
            server: 'pyright-langserver',
            introduced: [],
            resolved: [BROKE.introduced[0]],
            remaining: 3,
          },
        },
      },
    ),
  },
];
