import { message, type Message } from '@qilin-agent/i18n';
import { splitLines, type CallState } from '@qilin-agent/ui-primitives';
import { shortenPath } from '../paths';
import { Fields, Unsupported, type CardInput } from './common';
import { genericModel, type GenericModel } from './generic';
import { endedBadly, plainBody, stateOf, type PlainBody } from './outcome';

/** Lines of a file with their numbers. */
export interface ExcerptBody {
  readonly kind: 'excerpt';
  /** The lines, without line breaks. */
  readonly lines: readonly string[];
  /** The number of the first line. */
  readonly firstLine: number;
  /** Which lines of how many, when not the whole file. */
  readonly caption?: Message;
  /** Lines that were cut for length. */
  readonly cutLines?: Message;
}

/** The card of a `read` call, or of `str_replace_editor`'s `view` of a file. */
export interface ReadModel {
  readonly kind: 'read';
  readonly state: CallState;
  /** The card's title key. */
  readonly title: Message;
  /** The path as given, for `openFile`. */
  readonly path?: string;
  /** The path as the row shows it. */
  readonly summary?: string;
  /** The row's suffix: which lines. */
  readonly suffix?: Message;
  /** The expanded card. */
  readonly body?: ExcerptBody | PlainBody | { readonly kind: 'empty' };
}

function rangeCaption(first: number, last: number, total: number): Message | undefined {
  return first > 1 || last < total ? message('excerpt.lines', { first, last, total }) : undefined;
}

/**
 * The read card: the file's path (opened through the host with the path as given) and, once
 * read, its lines with their numbers. A failed read shows the plain input and output.
 */
export function readModel(input: CardInput): ReadModel | GenericModel {
  const state = stateOf(input);
  const title = message('tool.read.title');
  if (input.phase === 'preparing') return { kind: 'read', state, title };
  try {
    const args = new Fields(input.arguments, 'arguments');
    const path = args.text('path');
    args.optionalCount('offset');
    args.optionalCount('limit');
    const base = {
      kind: 'read' as const,
      state,
      title,
      path,
      summary: shortenPath(path, input.cwd, input.home),
    };
    if (input.result === undefined) return base;
    if (endedBadly(input)) return { ...base, body: plainBody(input) };
    const output = new Fields(input.result.output, 'output');
    const text = output.text('text');
    const first = output.count('first_line');
    const last = output.count('last_line');
    const total = output.count('total_lines');
    const cut = output.list('cut_lines');
    if (!cut.every((line) => typeof line === 'number')) throw new Unsupported('cut_lines');
    if (total === 0) return { ...base, body: { kind: 'empty' } };
    const lines = splitLines(text);
    if (first < 1 || lines.length !== last - first + 1)
      throw new Unsupported('the line numbers do not match the text');
    const caption = rangeCaption(first, last, total);
    return {
      ...base,
      ...(caption === undefined ? {} : { suffix: caption }),
      body: {
        kind: 'excerpt',
        lines,
        firstLine: first,
        ...(caption === undefined ? {} : { caption }),
        ...(cut.length === 0
          ? {}
          : { cutLines: message('excerpt.cutLines', { lines: cut.join(', ') }) }),
      },
    };
  } catch (error) {
    if (error instanceof Unsupported) return genericModel(input);
    throw error;
  }
}

/** Numbered lines as `str_replace_editor` writes them (`{:>6}\t{line}`), consecutive from the first. */
export function numberedLines(text: string): { firstLine: number; lines: string[] } | undefined {
  const numbered = splitLines(text)
    .map((line) => /^ *(\d+)\t(.*)$/.exec(line))
    .filter((match): match is RegExpExecArray => match !== null);
  const first = numbered[0];
  if (first === undefined) return undefined;
  const firstLine = Number(first[1]);
  if (!numbered.every((match, index) => Number(match[1]) === firstLine + index)) return undefined;
  return { firstLine, lines: numbered.map((match) => match[2] ?? '') };
}
