import { message, type Message } from '@qilin-agent/i18n';
import {
  addedFile,
  countHunks,
  numberHunkLines,
  parseUnifiedDiff,
  splitLines,
  type CallState,
  type DiffHunk,
  type DiffStatsValue,
} from '@qilin-agent/ui-primitives';
import { structuredPatch } from 'diff';
import { shortenPath } from '../paths';
import type { FileLines } from '../slots';
import { Fields, Unsupported, type CardInput } from './common';
import { genericModel, type GenericModel } from './generic';
import { editDiagnostics, type EditDiagnosticsRow } from './lsp';
import { numberedLines, type ExcerptBody, type ReadModel } from './read';
import { endedBadly, plainBody, stateOf, type PlainBody } from './outcome';

/** A change to a file as a diff. */
export interface DiffBody {
  readonly kind: 'diff';
  /** The hunks. */
  readonly hunks: readonly DiffHunk[];
  /** Whether the numbers are the file's (false for a change not yet applied). */
  readonly lineNumbers: boolean;
  /** A note beside the file's title ("new file"). */
  readonly note?: Message;
}

/** The card of a `write`, `edit` or changing `str_replace_editor` call. */
export interface DiffModel {
  readonly kind: 'diff';
  readonly state: CallState;
  /** The row's title. */
  readonly title: Message;
  /** The path as given, for `openFile`. */
  readonly path?: string;
  /** The path as the row shows it. */
  readonly summary?: string;
  /** The ± counts in the row and at the card's foot. */
  readonly stats?: DiffStatsValue;
  /** The expanded card. */
  readonly body?: DiffBody | PlainBody | ExcerptBody;
  /** The diagnostics the change carried (new and gone since before it), when the agent asked. */
  readonly diagnostics?: EditDiagnosticsRow;
}

/** The diagnostics field of a model, present only when the change carried some. */
function carried(output: Fields): { diagnostics?: EditDiagnosticsRow } {
  const diagnostics = editDiagnostics(output);
  return diagnostics === undefined ? {} : { diagnostics };
}

/**
 * The lines of the new file a change wrote (its added lines, or its kept ones when it only
 * removed), from the first to the last; `undefined` when the hunks carry no numbers.
 */
export function touchedLines(hunks: readonly DiffHunk[]): FileLines | undefined {
  const lines = hunks.flatMap((hunk) => hunk.lines);
  const added = lines.filter((line) => line.kind === 'added');
  const numbers = (added.length > 0 ? added : lines)
    .map((line) => line.newNumber)
    .filter((n) => n !== undefined);
  return numbers.length === 0
    ? undefined
    : { first: Math.min(...numbers), last: Math.max(...numbers) };
}

/** "Preparing content N KB": N counts the raw argument text so far, not the file's bytes. */
export function preparingSize(rawArguments: string): number {
  return Math.ceil(rawArguments.length / 1024);
}

/** The diff of replacing `before` with `after` (a snippet of a file: its numbers are unknown). */
function snippetDiff(before: string, after: string): DiffHunk[] {
  const patch = structuredPatch('a', 'b', before, after, '', '', { context: 3 });
  return patch.hunks.map((hunk) => ({ lines: numberHunkLines(hunk.lines, undefined, undefined) }));
}

function exact(hunks: readonly DiffHunk[]): DiffStatsValue {
  return { kind: 'exact', ...countHunks(hunks) };
}

function coarse(text: string): DiffStatsValue {
  return { kind: 'coarse', lines: splitLines(text).length };
}

/** The diff a finished change recorded (`diff`, `added`, `removed` in its output). */
function recordedDiff(output: Fields): { hunks: DiffHunk[]; stats: DiffStatsValue } {
  const hunks = parseUnifiedDiff(output.text('diff'));
  if (hunks === undefined) throw new Unsupported('the recorded diff is not a unified diff');
  return {
    hunks,
    stats: { kind: 'exact', added: output.count('added'), removed: output.count('removed') },
  };
}

function fallback<T>(input: CardInput, build: () => T): T | GenericModel {
  try {
    return build();
  } catch (error) {
    if (error instanceof Unsupported) return genericModel(input);
    throw error;
  }
}

/**
 * The write card: the new content as added lines. A created file has exact counts; a
 * replaced one (or one still being written) only "about N lines written".
 */
export function writeModel(input: CardInput): DiffModel | GenericModel {
  const state = stateOf(input);
  const title = message('tool.write.title');
  if (input.phase === 'preparing') return { kind: 'diff', state, title };
  return fallback(input, () => {
    const args = new Fields(input.arguments, 'arguments');
    const path = args.text('path');
    const content = args.text('content');
    const base = {
      kind: 'diff' as const,
      state,
      title,
      path,
      summary: shortenPath(path, input.cwd, input.home),
    };
    const hunks = addedFile(content);
    if (input.result === undefined) {
      return { ...base, stats: coarse(content), body: { kind: 'diff', hunks, lineNumbers: true } };
    }
    if (endedBadly(input)) return { ...base, body: plainBody(input) };
    const output = new Fields(input.result.output, 'output');
    const action = output.oneOf('action', ['created', 'replaced'] as const);
    if (action === 'created') {
      return {
        ...base,
        stats: exact(hunks),
        body: { kind: 'diff', hunks, lineNumbers: true, note: message('diff.newFile') },
        ...carried(output),
      };
    }
    return {
      ...base,
      stats: coarse(content),
      body: { kind: 'diff', hunks, lineNumbers: true },
      ...carried(output),
    };
  });
}

/**
 * The edit card: while running, the diff of the replaced text (no line numbers yet: where it
 * is in the file is not known); once done, the diff the tool recorded, numbered, with its
 * exact counts.
 */
export function editModel(input: CardInput): DiffModel | GenericModel {
  const state = stateOf(input);
  const title = message('tool.edit.title');
  if (input.phase === 'preparing') return { kind: 'diff', state, title };
  return fallback(input, () => {
    const args = new Fields(input.arguments, 'arguments');
    const path = args.text('path');
    const before = args.text('old_string');
    const after = args.text('new_string');
    const replaceAll = args.optionalFlag('replace_all') ?? false;
    const base = {
      kind: 'diff' as const,
      state,
      title,
      path,
      summary: shortenPath(path, input.cwd, input.home),
    };
    if (input.result === undefined) {
      const hunks = snippetDiff(before, after);
      return {
        ...base,
        stats: replaceAll ? coarse(after) : exact(hunks),
        body: { kind: 'diff', hunks, lineNumbers: false },
      };
    }
    if (endedBadly(input)) return { ...base, body: plainBody(input) };
    const output = new Fields(input.result.output, 'output');
    const recorded = recordedDiff(output);
    return {
      ...base,
      stats: recorded.stats,
      body: { kind: 'diff', hunks: recorded.hunks, lineNumbers: true },
      ...carried(output),
    };
  });
}

const EDITOR_COMMANDS = ['view', 'create', 'str_replace', 'insert', 'undo_edit'] as const;

/**
 * The `str_replace_editor` card: `view` of a file as the read card, `create` and
 * `str_replace` as a diff while running, and every change that recorded a diff as that diff.
 * A folder listing, a running `insert` or `undo_edit` and a failure show the plain card.
 */
export function editorModel(input: CardInput): DiffModel | ReadModel | GenericModel {
  const state = stateOf(input);
  if (input.phase === 'preparing') {
    return { kind: 'diff', state, title: message('tool.str_replace_editor.title') };
  }
  return fallback(input, (): DiffModel | ReadModel | GenericModel => {
    const args = new Fields(input.arguments, 'arguments');
    const command = args.oneOf('command', EDITOR_COMMANDS);
    const path = args.text('path');
    const summary = shortenPath(path, input.cwd, input.home);
    if (command === 'view') {
      const title = message('tool.str_replace_editor.view');
      const base = { kind: 'read' as const, state, title, path, summary };
      if (input.result === undefined) return base;
      if (endedBadly(input)) return { ...base, body: plainBody(input) };
      const text = new Fields(input.result.output, 'output').text('text');
      const numbered = numberedLines(text);
      if (numbered === undefined) return { ...base, body: plainBody(input, { withInput: false }) };
      return { ...base, body: { kind: 'excerpt', ...numbered } };
    }
    const title =
      command === 'create' || command === 'str_replace'
        ? message(`tool.str_replace_editor.${command}`)
        : message('tool.str_replace_editor.title');
    const base = { kind: 'diff' as const, state, title, path, summary };
    if (input.result === undefined) {
      if (command === 'create') {
        const text = args.text('file_text');
        return {
          ...base,
          stats: coarse(text),
          body: { kind: 'diff', hunks: addedFile(text), lineNumbers: true },
        };
      }
      if (command === 'str_replace') {
        const hunks = snippetDiff(args.text('old_str'), args.optionalText('new_str') ?? '');
        return { ...base, stats: exact(hunks), body: { kind: 'diff', hunks, lineNumbers: false } };
      }
      return { ...base, body: plainBody(input) };
    }
    if (endedBadly(input)) return { ...base, body: plainBody(input) };
    const output = new Fields(input.result.output, 'output');
    if (output.optionalText('diff') === undefined) {
      return { ...base, body: plainBody(input), ...carried(output) };
    }
    const recorded = recordedDiff(output);
    return {
      ...base,
      stats: recorded.stats,
      body: { kind: 'diff', hunks: recorded.hunks, lineNumbers: true },
      ...carried(output),
    };
  });
}
