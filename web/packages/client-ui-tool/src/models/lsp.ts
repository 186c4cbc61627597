// The `lsp` card from the raw fields of its call: what it asked the language server, and the
// locations, symbols, calls, diagnostics or hover the runtime recorded — or why it found none.
// The diagnostics `write`, `edit` and `str_replace_editor` carry are read here too.
import { message, type Message } from '@qilin-agent/i18n';
import type {
  LspEmptyReason,
  LspOperation,
  LspSeverity,
  SpilledOutput,
} from '@qilin-agent/protocol';
import type { CallState } from '@qilin-agent/ui-primitives';
import { shortenPath } from '../paths';
import type { FileLines } from '../slots';
import { Fields, Unsupported, type CardInput } from './common';
import { genericModel, type GenericModel } from './generic';
import { endedBadly, plainBody, stateOf, type PlainBody } from './outcome';

/** Every operation of the `lsp` tool, in the order the tool documents them. */
export const LSP_OPERATIONS: readonly LspOperation[] = [
  'definition',
  'references',
  'hover',
  'document_symbols',
  'workspace_symbols',
  'implementation',
  'incoming_calls',
  'outgoing_calls',
  'diagnostics',
];

/** Every severity, most serious first: the order diagnostics are listed in. */
export const LSP_SEVERITIES: readonly LspSeverity[] = ['error', 'warning', 'information', 'hint'];

/** Every reason a result is empty. */
export const LSP_EMPTY_REASONS: readonly LspEmptyReason[] = [
  'no_server',
  'starting',
  'timed_out',
  'crashed',
  'not_found',
];

/** The symbol kinds the catalogue names (the protocol's snake_case kinds); others show as sent. */
export const LSP_SYMBOL_KINDS = [
  'file',
  'module',
  'namespace',
  'package',
  'class',
  'method',
  'property',
  'field',
  'constructor',
  'enum',
  'interface',
  'function',
  'variable',
  'constant',
  'string',
  'number',
  'boolean',
  'array',
  'object',
  'key',
  'null',
  'enum_member',
  'struct',
  'event',
  'operator',
  'type_parameter',
] as const;

/** A symbol kind the catalogue names. */
export type LspSymbolKind = (typeof LSP_SYMBOL_KINDS)[number];

/** One line shown around a definition. */
export interface LspContextRow {
  readonly line: number;
  readonly text: string;
}

/** One location, symbol, call or diagnostic as the card shows it. */
export interface LspRow {
  /** The URI as the server named it. */
  readonly uri: string;
  /** The workspace-relative path: set only for a file inside the workspace (a link). */
  readonly path?: string;
  /** The start, from 1. */
  readonly line: number;
  readonly character: number;
  /** The end line, from 1, when the server gave a range. */
  readonly endLine?: number;
  /** The start line's text. */
  readonly text?: string;
  /** Lines around a definition (empty otherwise). */
  readonly context: readonly LspContextRow[];
  readonly name?: string;
  /** The kind as sent (`function`, `class`, …). */
  readonly kind?: string;
  readonly detail?: string;
  /** Nesting of a document symbol (0 at the top). */
  readonly depth?: number;
  readonly severity?: LspSeverity;
  readonly message?: string;
  readonly source?: string;
  readonly code?: string;
}

/** A document symbol and the symbols declared inside it. */
export interface LspSymbolNode {
  readonly row: LspRow;
  readonly children: readonly LspSymbolNode[];
}

/** The rows of one file (or of one non-file URI). */
export interface LspGroup {
  /** The key the rows share: the path inside the workspace, else the URI. */
  readonly key: string;
  /** What the group's header shows: the path, a file elsewhere shortened, or the URI. */
  readonly label: string;
  /** The path to open through the host; absent for a URI that is not a workspace file. */
  readonly path?: string;
  /** The rows, in order (diagnostics: most serious first, then by line). */
  readonly rows: readonly LspRow[];
  /** Document symbols nested by depth (only for `document_symbols`). */
  readonly symbols?: readonly LspSymbolNode[];
}

/** Why a result is empty, in the runtime's words. */
export interface LspEmptyRow {
  readonly reason: LspEmptyReason;
  readonly message: string;
  /** How to get a server (for `no_server`). */
  readonly hint?: string;
}

/** Diagnostics counted by severity. */
export type SeverityCounts = Readonly<Record<LspSeverity, number>>;

/** What an ended `lsp` call returned. */
export interface LspResultRow {
  readonly operation: LspOperation;
  readonly language?: string;
  readonly server?: string;
  readonly groups: readonly LspGroup[];
  /** Every row, in the groups' order. */
  readonly count: number;
  /** The hover's Markdown. */
  readonly hover?: string;
  /** Why nothing came back. */
  readonly empty?: LspEmptyRow;
  /** Rows before the runtime's cap. */
  readonly total: number;
  /** True when rows were cut at the cap. */
  readonly truncated: boolean;
  /** The file holding every row, when they were cut. */
  readonly spill?: SpilledOutput;
  /** For diagnostics: how many of each severity. */
  readonly severities?: SeverityCounts;
}

/** The card of an `lsp` call. */
export interface LspModel {
  readonly kind: 'lsp';
  readonly state: CallState;
  /** The operation asked for; absent while preparing. */
  readonly operation?: LspOperation;
  /** Where or what it asked about: `path:line:character`, or the query. */
  readonly target?: string;
  /** What came back, once the call ended `ok`. */
  readonly result?: LspResultRow;
  /** A failed call's plain card. */
  readonly body?: PlainBody;
}

/** The diagnostics a file change carried (`write`, `edit`, `str_replace_editor`). */
export interface EditDiagnosticsRow {
  readonly server: string;
  /** New since before the edit, most serious first. */
  readonly introduced: readonly LspRow[];
  /** Gone since before the edit. */
  readonly resolved: readonly LspRow[];
  /** The file's diagnostics after the edit, every severity. */
  readonly remaining: number;
  readonly note?: string;
}

function severityRank(row: LspRow): number {
  return row.severity === undefined ? LSP_SEVERITIES.length : LSP_SEVERITIES.indexOf(row.severity);
}

/** Rows most serious first, then by place (a stable order for diagnostics). */
export function bySeverity(rows: readonly LspRow[]): LspRow[] {
  return [...rows].sort(
    (a, b) => severityRank(a) - severityRank(b) || a.line - b.line || a.character - b.character,
  );
}

/** Rows by place in their file. */
function byPlace(rows: readonly LspRow[]): LspRow[] {
  return [...rows].sort((a, b) => a.line - b.line || a.character - b.character);
}

/** A position's count: a whole number from 1. */
function position(fields: Fields, name: string, what: string): number {
  const value = fields.count(name);
  if (value === 0) throw new Unsupported(`${what}.${name} counts from 1`);
  return value;
}

function optionalPosition(fields: Fields, name: string, what: string): number | undefined {
  const value = fields.optionalCount(name);
  if (value === 0) throw new Unsupported(`${what}.${name} counts from 1`);
  return value;
}

function nonBlank(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}

/** One recorded item (`LspItem`); throws [`Unsupported`] for another shape. */
export function lspRow(value: unknown, what = 'item'): LspRow {
  const fields = new Fields(value, what);
  const uri = fields.text('uri');
  if (uri.trim() === '') throw new Unsupported(`${what}.uri is empty`);
  const path = nonBlank(fields.optionalText('path'));
  const endLine = optionalPosition(fields, 'endLine', what);
  const severity = fields.raw('severity');
  const context = (fields.optionalList('context') ?? []).map((entry, at) => {
    const line = new Fields(entry, `${what}.context[${at}]`);
    return { line: position(line, 'line', `${what}.context[${at}]`), text: line.text('text') };
  });
  const optional = (name: keyof LspRow & string) => {
    const text = nonBlank(fields.optionalText(name));
    return text === undefined ? {} : { [name]: text };
  };
  const depth = fields.optionalCount('depth');
  return {
    uri,
    ...(path === undefined ? {} : { path }),
    line: position(fields, 'line', what),
    character: position(fields, 'character', what),
    ...(endLine === undefined ? {} : { endLine }),
    ...optional('text'),
    context,
    ...optional('name'),
    ...optional('kind'),
    ...optional('detail'),
    ...(depth === undefined ? {} : { depth }),
    ...(severity === undefined || severity === null
      ? {}
      : { severity: fields.oneOf('severity', LSP_SEVERITIES) }),
    ...optional('message'),
    ...optional('source'),
    ...optional('code'),
  };
}

/**
 * Where a row is, for a group's header: the workspace path; a file elsewhere as a path
 * (shortened against the working folder and home, never a link); any other URI as it is.
 */
export function placeLabel(row: Pick<LspRow, 'uri' | 'path'>, cwd?: string, home?: string): string {
  if (row.path !== undefined) return row.path;
  if (row.uri.startsWith('file://')) {
    try {
      const path = decodeURIComponent(new URL(row.uri).pathname);
      return shortenPath(path, cwd, home);
    } catch {
      return row.uri;
    }
  }
  return row.uri;
}

/** The lines a row covers, for the host's preview. */
export function rowLines(row: Pick<LspRow, 'line' | 'endLine'>): FileLines {
  return {
    first: row.line,
    last: row.endLine === undefined || row.endLine < row.line ? row.line : row.endLine,
  };
}

/**
 * Nests document symbols listed in order by their depth: each goes under the last symbol
 * before it one level up. A symbol more than one level deeper than the one before it goes under
 * that one (the nearest parent it can have).
 */
export function nestSymbols(rows: readonly LspRow[]): LspSymbolNode[] {
  type Building = { row: LspRow; children: Building[] };
  const top: Building[] = [];
  const open: Building[] = [];
  for (const row of rows) {
    const level = Math.min(row.depth ?? 0, open.length);
    const node: Building = { row, children: [] };
    open.length = level;
    (open[level - 1]?.children ?? top).push(node);
    open.push(node);
  }
  return top;
}

/**
 * Groups rows by file (the workspace path, else the URI), files in the order they first
 * appear — for diagnostics, the file with the most serious first. Inside a file, diagnostics
 * are most serious first, document symbols keep their declared order (nested by depth), and
 * every other row is by line and character.
 */
export function groupRows(
  operation: LspOperation,
  rows: readonly LspRow[],
  cwd?: string,
  home?: string,
): LspGroup[] {
  const groups = new Map<string, LspRow[]>();
  for (const row of rows) {
    const key = row.path ?? row.uri;
    const list = groups.get(key);
    if (list === undefined) groups.set(key, [row]);
    else list.push(row);
  }
  const built = [...groups.entries()].map(([key, list]): LspGroup => {
    const first = list[0] as LspRow;
    const ordered =
      operation === 'diagnostics'
        ? bySeverity(list)
        : operation === 'document_symbols'
          ? list
          : byPlace(list);
    return {
      key,
      label: placeLabel(first, cwd, home),
      ...(first.path === undefined ? {} : { path: first.path }),
      rows: ordered,
      ...(operation === 'document_symbols' ? { symbols: nestSymbols(list) } : {}),
    };
  });
  if (operation !== 'diagnostics') return built;
  const worst = (group: LspGroup) => Math.min(...group.rows.map(severityRank));
  return built
    .map((group, index) => ({ group, index }))
    .sort((a, b) => worst(a.group) - worst(b.group) || a.index - b.index)
    .map(({ group }) => group);
}

/** Diagnostics counted by severity (a diagnostic without one counts as an error, as servers do). */
export function countSeverities(rows: readonly LspRow[]): SeverityCounts {
  const counts = { error: 0, warning: 0, information: 0, hint: 0 };
  for (const row of rows) counts[row.severity ?? 'error'] += 1;
  return counts;
}

function emptyRow(value: unknown, what: string): LspEmptyRow {
  const fields = new Fields(value, what);
  const hint = nonBlank(fields.optionalText('hint'));
  return {
    reason: fields.oneOf('reason', LSP_EMPTY_REASONS),
    message: fields.text('message'),
    ...(hint === undefined ? {} : { hint }),
  };
}

function spillOf(value: unknown, what: string): SpilledOutput | undefined {
  if (value === undefined || value === null) return undefined;
  const fields = new Fields(value, what);
  return { path: fields.text('path'), totalBytes: fields.count('totalBytes') };
}

/**
 * A recorded `LspOutput`; throws [`Unsupported`] for another shape: an unknown operation, an
 * empty result that does not say why, a reason given beside rows.
 */
export function lspResult(value: unknown, cwd?: string, home?: string): LspResultRow {
  const fields = new Fields(value, 'output');
  const operation = fields.oneOf('operation', LSP_OPERATIONS);
  // Empty lists are left out on the wire.
  const rows = (fields.optionalList('items') ?? []).map((item, at) =>
    lspRow(item, `output.items[${at}]`),
  );
  const hover = nonBlank(fields.optionalText('hover'));
  const emptyValue = fields.raw('empty');
  const empty =
    emptyValue === undefined || emptyValue === null
      ? undefined
      : emptyRow(emptyValue, 'output.empty');
  if (empty !== undefined && (rows.length > 0 || hover !== undefined)) {
    throw new Unsupported('output.empty is set beside a result');
  }
  if (empty === undefined && rows.length === 0 && hover === undefined) {
    throw new Unsupported('output has no result and says not why');
  }
  const total = fields.count('total');
  const truncated = fields.flag('truncated');
  const spill = spillOf(fields.raw('spill'), 'output.spill');
  const language = nonBlank(fields.optionalText('language'));
  const server = nonBlank(fields.optionalText('server'));
  return {
    operation,
    ...(language === undefined ? {} : { language }),
    ...(server === undefined ? {} : { server }),
    groups: groupRows(operation, rows, cwd, home),
    count: rows.length,
    ...(hover === undefined ? {} : { hover }),
    ...(empty === undefined ? {} : { empty }),
    total: Math.max(total, rows.length),
    truncated,
    ...(spill === undefined ? {} : { spill }),
    ...(operation === 'diagnostics' ? { severities: countSeverities(rows) } : {}),
  };
}

/** What a call asked about, for the row: `path:line:character`, `path`, or the query. */
function targetOf(args: Fields, input: CardInput): string | undefined {
  const path = nonBlank(args.optionalText('path'));
  const query = args.optionalText('query');
  const line = args.optionalCount('line');
  const character = args.optionalCount('character');
  if (path !== undefined) {
    const shown = shortenPath(path, input.cwd, input.home);
    if (line === undefined) return shown;
    return character === undefined ? `${shown}:${line}` : `${shown}:${line}:${character}`;
  }
  return query === undefined ? undefined : `“${query}”`;
}

/**
 * The `lsp` card: the operation and its target on the row; once ended, the locations grouped
 * by file (workspace files open in the host at their line, other URIs are text), a definition's
 * context lines, symbols nested, call hierarchy items, diagnostics most serious first, a hover's
 * Markdown, or why nothing came back. A failed call shows its plain input and error; a record of
 * another operation than the call asked for, or data of another shape, the generic card.
 */
export function lspModel(input: CardInput): LspModel | GenericModel {
  const state = stateOf(input);
  if (input.phase === 'preparing') return { kind: 'lsp', state };
  try {
    const args = new Fields(input.arguments, 'arguments');
    const operation = args.oneOf('operation', LSP_OPERATIONS);
    const target = targetOf(args, input);
    const base = {
      kind: 'lsp' as const,
      state,
      operation,
      ...(target === undefined ? {} : { target }),
    };
    if (input.result === undefined) return base;
    if (endedBadly(input)) return { ...base, body: plainBody(input) };
    const result = lspResult(input.result.output, input.cwd, input.home);
    if (result.operation !== operation) {
      throw new Unsupported(`output.operation is ${result.operation}, not ${operation}`);
    }
    return { ...base, result };
  } catch (error) {
    if (error instanceof Unsupported) return genericModel(input);
    throw error;
  }
}

/**
 * The row's suffix of an ended `lsp` call: how much came back (diagnostics by severity), or
 * why nothing did; nothing for a hover.
 */
export function lspSuffix(result: LspResultRow): Message[] {
  if (result.empty !== undefined) return [message(`lsp.empty.${result.empty.reason}`)];
  if (result.operation === 'hover' && result.count === 0) return [];
  if (result.severities !== undefined) {
    const { error, warning } = result.severities;
    const said = [
      ...(error > 0 ? [message('lsp.count.errors', { count: error })] : []),
      ...(warning > 0 ? [message('lsp.count.warnings', { count: warning })] : []),
    ];
    return said.length > 0 ? said : [message('lsp.count.diagnostics', { count: result.count })];
  }
  const files = result.groups.length;
  if (files > 1) return [message('lsp.count.inFiles', { results: result.total, files })];
  return [message('lsp.count.results', { count: result.total })];
}

/**
 * The diagnostics a change carried, from its output's `diagnostics` (`EditDiagnostics`);
 * `undefined` when it carried none. Throws [`Unsupported`] for another shape.
 */
export function editDiagnostics(output: Fields): EditDiagnosticsRow | undefined {
  const value = output.raw('diagnostics');
  if (value === undefined || value === null) return undefined;
  const fields = new Fields(value, 'output.diagnostics');
  const rows = (name: string) =>
    (fields.optionalList(name) ?? []).map((item, at) =>
      lspRow(item, `output.diagnostics.${name}[${at}]`),
    );
  const note = nonBlank(fields.optionalText('note'));
  return {
    server: fields.text('server'),
    introduced: bySeverity(rows('introduced')),
    resolved: bySeverity(rows('resolved')),
    remaining: fields.count('remaining'),
    ...(note === undefined ? {} : { note }),
  };
}
