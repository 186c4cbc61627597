import { message, type Message } from '@qilin-agent/i18n';
import type { CallState, SearchGroup } from '@qilin-agent/ui-primitives';
import { shortenPath } from '../paths';
import { Fields, Unsupported, type CardInput } from './common';
import { genericModel, type GenericModel } from './generic';
import { endedBadly, plainBody, stateOf, type PlainBody } from './outcome';

/** The card of a `grep` or `glob` call. */
export interface SearchModel {
  readonly kind: 'search';
  readonly state: CallState;
  /** The row's title. */
  readonly title: Message;
  /** The pattern searched for. */
  readonly pattern?: string;
  /** The pattern and where, for the row. */
  readonly summary?: string;
  /** How much was found, for the row. */
  readonly suffix?: Message;
  /** The results grouped by file, or a failed call's plain card. */
  readonly body?:
    | {
        readonly kind: 'results';
        readonly groups: readonly SearchGroup[];
        readonly truncated: boolean;
      }
    | PlainBody;
}

function where(summary: string, path: string | undefined, input: CardInput): string {
  return path === undefined ? summary : `${summary} · ${shortenPath(path, input.cwd, input.home)}`;
}

function build(
  input: CardInput,
  title: Message,
  results: (output: Fields) => SearchModel['body'] & { kind: 'results' },
  suffix: (output: Fields) => Message,
): SearchModel | GenericModel {
  const state = stateOf(input);
  if (input.phase === 'preparing') return { kind: 'search', state, title };
  try {
    const args = new Fields(input.arguments, 'arguments');
    const pattern = args.text('pattern');
    const base = {
      kind: 'search' as const,
      state,
      title,
      pattern,
      summary: where(pattern, args.optionalText('path'), input),
    };
    if (input.result === undefined) return base;
    if (endedBadly(input)) return { ...base, body: plainBody(input) };
    const output = new Fields(input.result.output, 'output');
    return { ...base, body: results(output), suffix: suffix(output) };
  } catch (error) {
    if (error instanceof Unsupported) return genericModel(input);
    throw error;
  }
}

/** The grep card: the files with matches, each with its count and matching lines. */
export function grepModel(input: CardInput): SearchModel | GenericModel {
  return build(
    input,
    message('tool.grep.title'),
    (output) => {
      output.oneOf('mode', ['content', 'files_with_matches', 'count'] as const);
      const groups = output.list('files').map((raw): SearchGroup => {
        const file = new Fields(raw, 'output.files[]');
        const path = file.text('path');
        const matchCount = file.optionalCount('match_count');
        return {
          path,
          label: shortenPath(path, input.cwd, input.home),
          ...(matchCount === undefined ? {} : { matchCount }),
          lines: file.list('lines').map((rawLine) => {
            const line = new Fields(rawLine, 'output.files[].lines[]');
            return {
              line: line.count('line'),
              text: line.text('text'),
              context: line.flag('context'),
            };
          }),
        };
      });
      return { kind: 'results', groups, truncated: output.flag('truncated') };
    },
    (output) => {
      const mode = output.oneOf('mode', ['content', 'files_with_matches', 'count'] as const);
      return mode === 'files_with_matches'
        ? message('search.files', { count: output.count('total_files') })
        : message('search.matches', { count: output.count('total_matches') });
    },
  );
}

/** The glob card: the files found. */
export function globModel(input: CardInput): SearchModel | GenericModel {
  return build(
    input,
    message('tool.glob.title'),
    (output) => {
      const groups = output.list('files').map((path): SearchGroup => {
        if (typeof path !== 'string') throw new Unsupported('output.files[] is not a path');
        return { path, label: shortenPath(path, input.cwd, input.home), lines: [] };
      });
      return { kind: 'results', groups, truncated: output.flag('truncated') };
    },
    (output) => message('search.files', { count: output.count('total') }),
  );
}
