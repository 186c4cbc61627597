import type { CallState } from '@qilin-agent/ui-primitives';
import { Fields, Unsupported, firstLine, flattenContent, type CardInput } from './common';
import { genericModel, type GenericModel } from './generic';
import { stateOf } from './outcome';
import type { LiveGap } from '../slots';

/** The card of a `run_code` call: the dispatch card its nested calls render under. */
export interface RunCodeModel {
  readonly kind: 'runCode';
  readonly state: CallState;
  /** The code's first line, for the row. */
  readonly summary?: string;
  /** The code. */
  readonly code?: string;
  /** What the run gave back (printed text and value, or the error), once ended. */
  readonly output?: string;
  /** Live output so far. */
  readonly progress?: string;
  /** Live output left out after `progress`, and the latest output after it. */
  readonly progressGap?: LiveGap;
}

/** The dispatch card of `run_code`: the code, then what it printed or the error it raised. */
export function runCodeModel(input: CardInput): RunCodeModel | GenericModel {
  const state = stateOf(input);
  if (input.phase === 'preparing') return { kind: 'runCode', state };
  try {
    const args = new Fields(input.arguments, 'arguments');
    const code = args.text('code');
    args.optionalCount('timeout_ms');
    return {
      kind: 'runCode',
      state,
      summary: firstLine(code),
      code,
      ...(input.result === undefined
        ? {
            progress: input.progress ?? '',
            ...(input.progressGap === undefined ? {} : { progressGap: input.progressGap }),
          }
        : { output: flattenContent(input.result.content) }),
    };
  } catch (error) {
    if (error instanceof Unsupported) return genericModel(input);
    throw error;
  }
}
