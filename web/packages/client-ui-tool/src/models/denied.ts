import type { ReviewRisk } from '@qilin-agent/protocol';
import type { CardInput } from './common';

/**
 * Who refused a call: a rule of the agent's review policy (`policy`), the reviewer model
 * (`reviewer`), or the unattended policy once the reviewer failed (`failed`) or did not answer in
 * time (`timed_out`).
 */
export type Refusal = 'policy' | 'reviewer' | 'failed' | 'timed_out';

/**
 * A call the agent's review refused: the call's identity, "Auto review" and who refused it on
 * the row, and one reason for the person, never the raw arguments nor the message the model
 * read; for a refusal by the reviewer model, whether a person may still allow it.
 */
export interface DeniedModel {
  readonly kind: 'denied';
  /** The tool's wire name. */
  readonly toolName: string;
  /** Why it did not run, on one line; absent when nothing was recorded (a fallback shows). */
  readonly reason?: string;
  /** Who refused it. */
  readonly refusal: Refusal;
  /** The reviewer model's id, when the reviewer judged the call (or failed to). */
  readonly reviewer?: string;
  /** How long the review took, in milliseconds. */
  readonly latencyMs?: number;
  /** How risky the reviewer judged it. */
  readonly risk?: ReviewRisk;
  /**
   * True when a person may allow the call: the reviewer model refused it, failed or timed out
   * (a rule's denial cannot be overridden call by call).
   */
  readonly overridable: boolean;
  /** True once a person allowed it (their grant is in the log). */
  readonly allowed: boolean;
}

/**
 * The reason as shown, and nothing more done to it: every line separator (CRLF, CR, LF, NEL,
 * U+2028, U+2029) folded into one space, the ends trimmed. Spaces and tabs inside stay as the
 * person wrote them; the recorded text itself is kept as it is.
 */
export function normaliseReason(text: string): string {
  return text.replace(/\r\n|[\r\n\u0085\u2028\u2029]/g, ' ').trim();
}

/** Who refused a call, from its error code and its review. */
function refusalOf(input: CardInput): Refusal {
  const code = input.result?.errorCode;
  if (code === 'AUTO_REVIEW_FAILED') return 'failed';
  if (code === 'AUTO_REVIEW_TIMEOUT') return 'timed_out';
  switch (input.review?.verdict) {
    case 'deny':
      return 'reviewer';
    case 'failed':
      return 'failed';
    case 'timed_out':
      return 'timed_out';
    default:
      return 'policy';
  }
}

/**
 * The denial card of a call review refused (`AUTO_REVIEW_DENIED`, `AUTO_REVIEW_FAILED`,
 * `AUTO_REVIEW_TIMEOUT`): the reason recorded for the person (the result's `userReason`, else
 * the review's), normalised; without one, the card shows a localised generic reason. The model's
 * message — what it should do instead — stays in the result's content.
 */
export function deniedModel(input: CardInput): DeniedModel {
  const review = input.review;
  const reason = normaliseReason(input.result?.userReason ?? review?.userReason ?? '');
  const refusal = refusalOf(input);
  return {
    kind: 'denied',
    toolName: input.toolName,
    ...(reason === '' ? {} : { reason }),
    refusal,
    ...(review === undefined ? {} : { reviewer: review.reviewer, latencyMs: review.latencyMs }),
    ...(review?.risk === undefined ? {} : { risk: review.risk }),
    overridable: review !== undefined && refusal !== 'policy',
    // A refused call never ran by a grant: a grant on it is the person's permission for it.
    allowed: input.grant !== undefined,
  };
}
