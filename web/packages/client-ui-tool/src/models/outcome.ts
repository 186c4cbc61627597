import { callState, flattenArguments, flattenContent, liveOutput, type CardInput } from './common';
import type { LiveGap } from '../slots';
import type { CallState } from '@qilin-agent/ui-primitives';

/** The flattened input and output a card shows when its own display does not apply. */
export interface PlainBody {
  readonly kind: 'plain';
  /** The arguments, flattened. */
  readonly input?: string;
  /** Live output so far. */
  readonly progress?: string;
  /** Live output left out after `progress`, and the latest output after it. */
  readonly progressGap?: LiveGap;
  /** What the model saw. */
  readonly output?: string;
}

/** The plain body of a call: its arguments, its live output while running, its result text. */
export function plainBody(input: CardInput, options: { withInput?: boolean } = {}): PlainBody {
  const flattened = options.withInput === false ? undefined : flattenArguments(input.arguments);
  return {
    kind: 'plain',
    ...(flattened === undefined ? {} : { input: flattened }),
    ...liveOutput(input),
    ...(input.result === undefined ? {} : { output: flattenContent(input.result.content) }),
  };
}

/** True when the call ended other than `ok` (its card shows the plain body). */
export function endedBadly(input: CardInput): boolean {
  return input.result !== undefined && input.result.status !== 'ok';
}

/** The state of a call, re-exported for the models. */
export function stateOf(input: CardInput): CallState {
  return callState(input);
}
