import { flattenContent, type CardInput } from './common';

/**
 * A call the agent's review policy refused: the call's identity, "Auto review" on the row,
 * and one reason, never the raw arguments.
 */
export interface DeniedModel {
  readonly kind: 'denied';
  /** The tool's wire name. */
  readonly toolName: string;
  /** Why it did not run, on one line; absent when nothing was recorded (a fallback shows). */
  readonly reason?: string;
}

/**
 * The reason as shown: trimmed, every line separator (CR, LF, U+2028, U+2029, NEL) folded to a
 * space, runs of spaces made one. The recorded text itself is kept as it is.
 */
export function normaliseReason(text: string): string {
  return text
    .replace(/[\r\n\u2028\u2029\u0085]+/g, ' ')
    .replace(/[ \t]{2,}/g, ' ')
    .trim();
}

/** The denial card of a call that failed with `AUTO_REVIEW_DENIED`. */
export function deniedModel(input: CardInput): DeniedModel {
  const reason = normaliseReason(flattenContent(input.result?.content));
  return { kind: 'denied', toolName: input.toolName, ...(reason === '' ? {} : { reason }) };
}
