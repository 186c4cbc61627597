import type { CardInput } from './common';

/**
 * A call the agent's review policy refused: the call's identity, "Auto review" on the row,
 * and one reason for the person, never the raw arguments nor the message the model read.
 */
export interface DeniedModel {
  readonly kind: 'denied';
  /** The tool's wire name. */
  readonly toolName: string;
  /** Why it did not run, on one line; absent when nothing was recorded (a fallback shows). */
  readonly reason?: string;
}

/**
 * The reason as shown, and nothing more done to it: every line separator (CRLF, CR, LF, NEL,
 * U+2028, U+2029) folded into one space, the ends trimmed. Spaces and tabs inside stay as the
 * person wrote them; the recorded text itself is kept as it is.
 */
export function normaliseReason(text: string): string {
  return text.replace(/\r\n|[\r\n\u0085\u2028\u2029]/g, ' ').trim();
}

/**
 * The denial card of a call that failed with `AUTO_REVIEW_DENIED`: the reason recorded for the
 * person (`userReason`), normalised; without one, the card shows a localised generic reason.
 * The model's message — what it should do instead — stays in the result's content.
 */
export function deniedModel(input: CardInput): DeniedModel {
  const reason = normaliseReason(input.result?.userReason ?? '');
  return { kind: 'denied', toolName: input.toolName, ...(reason === '' ? {} : { reason }) };
}
