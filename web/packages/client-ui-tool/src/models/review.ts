import type { AutoReviewRecord, ReviewGrant, ReviewRisk } from '@qilin-agent/protocol';
import type { ResultBlock } from '../slots';
import { isReviewRefusal } from './common';
import { normaliseReason } from './denied';

/**
 * The quiet mark on the row of a call review let run: the reviewer model allowed it
 * (`reviewed`), it failed or timed out and a person was asked instead (`failed`, `timed_out`),
 * or it is the retry that ran by a person's grant (`granted`).
 */
export interface ReviewMarkModel {
  /** Why the call ran. */
  readonly kind: 'reviewed' | 'failed' | 'timed_out' | 'granted';
  /** The reviewer model's id (absent for a grant). */
  readonly reviewer?: string;
  /** How risky the reviewer judged the call. */
  readonly risk?: ReviewRisk;
  /** The reviewer's reason for the person, normalised (empty when it gave none). */
  readonly reason: string;
}

/** What the mark reads of a call: its id, its review, how it ended, and its grant. */
export interface MarkedCall {
  readonly callId: string;
  readonly review?: AutoReviewRecord | undefined;
  readonly outcome?: ResultBlock | undefined;
  readonly grant?: ReviewGrant | undefined;
}

/**
 * The review mark of a call, or `undefined` when it has none: a call review refused shows the
 * denial card instead, and a call nobody reviewed shows nothing.
 */
export function reviewMark(call: MarkedCall): ReviewMarkModel | undefined {
  if (call.grant?.usedBy === call.callId) return { kind: 'granted', reason: '' };
  const review = call.review;
  if (review === undefined || isReviewRefusal(call.outcome)) return undefined;
  const kind =
    review.verdict === 'allow'
      ? 'reviewed'
      : review.verdict === 'failed'
        ? 'failed'
        : review.verdict === 'timed_out'
          ? 'timed_out'
          : undefined;
  // A denial always ends as a refusal; one that did not is no call review let run.
  if (kind === undefined) return undefined;
  return {
    kind,
    reviewer: review.reviewer,
    ...(review.risk === undefined ? {} : { risk: review.risk }),
    reason: normaliseReason(review.userReason),
  };
}
