// The denial card's model for calls the reviewer model judged: who refused (the reviewer, or
// the unattended policy after it failed or timed out), the reason for the person, whether a
// person may still allow the call, and whether they did.
import type { AutoReviewRecord, ErrorCode, ReviewGrant } from '@qilin-agent/protocol';
import { describe, expect, test } from 'vitest';
import { isReviewRefusal, type CardInput } from './common';
import { deniedModel } from './denied';

const REVIEWER = 'scripted:reviewer.yaml';

function review(verdict: AutoReviewRecord['verdict'], userReason: string): AutoReviewRecord {
  return {
    reviewer: REVIEWER,
    verdict,
    ...(verdict === 'allow' || verdict === 'deny' ? { risk: 'high' as const } : {}),
    userReason,
    latencyMs: 4,
    inputTokens: 200,
    outputTokens: 40,
    ...(verdict === 'failed' || verdict === 'timed_out'
      ? { fallback: 'unattended_policy' as const }
      : {}),
  };
}

/** A bash call refused with `code`, its result's reason, and its review. */
function refused(
  code: ErrorCode,
  userReason: string | undefined,
  judged?: AutoReviewRecord,
  grant?: ReviewGrant,
): CardInput {
  return {
    toolName: 'bash',
    phase: 'result',
    arguments: { command: 'git push --force' },
    ...(judged === undefined ? {} : { review: judged }),
    ...(grant === undefined ? {} : { grant }),
    result: {
      status: 'denied',
      errorCode: code,
      content: [{ type: 'text', text: 'Force-pushing rewrites history. Do not retry it.' }],
      ...(userReason === undefined ? {} : { userReason }),
      durationMs: 0,
    },
  };
}

describe('a call the reviewer model refused', () => {
  test('shows the reviewer, its risk and the reason for the person, and may be allowed', () => {
    const denied = review('deny', 'force-pushing\nrewrites the shared history ');
    const model = deniedModel(refused('AUTO_REVIEW_DENIED', denied.userReason, denied));
    expect(model).toEqual({
      kind: 'denied',
      toolName: 'bash',
      reason: 'force-pushing rewrites the shared history',
      refusal: 'reviewer',
      reviewer: REVIEWER,
      latencyMs: 4,
      risk: 'high',
      overridable: true,
      allowed: false,
    });
    // Neither the arguments nor the model's message reach the card.
    expect(JSON.stringify(model)).not.toContain('--force');
    expect(JSON.stringify(model)).not.toContain('Do not retry');
  });

  test('a failed review refused by the unattended policy says so, with what went wrong', () => {
    const failed = review('failed', 'the reviewer answered no verdict');
    const model = deniedModel(refused('AUTO_REVIEW_FAILED', undefined, failed));
    expect(model).toMatchObject({
      refusal: 'failed',
      reason: 'the reviewer answered no verdict',
      overridable: true,
    });
    expect(model.risk).toBeUndefined();
  });

  test('a timed-out review is told apart from a failed one', () => {
    const late = review('timed_out', 'the reviewer did not answer in 90 s');
    const model = deniedModel(refused('AUTO_REVIEW_TIMEOUT', '  ', late));
    // A blank reason on the result gives way to none at all: the card's fallback shows.
    expect(model).toMatchObject({ refusal: 'timed_out', overridable: true });
    expect(model.reason).toBeUndefined();
  });

  test('a grant for the call marks it allowed', () => {
    const denied = review('deny', 'pushing publishes the work');
    const grant: ReviewGrant = {
      id: 'grant-1',
      callId: 'call_2',
      toolName: 'bash',
      arguments: { command: 'git push --force' },
      grantedAt: '2026-11-30T17:05:16.123Z',
    };
    expect(deniedModel(refused('AUTO_REVIEW_DENIED', 'x', denied, grant)).allowed).toBe(true);
  });
});

describe('a call a rule refused', () => {
  test('is the policy\u2019s, and no person may allow it call by call', () => {
    const model = deniedModel(refused('AUTO_REVIEW_DENIED', 'never delete trees'));
    expect(model).toEqual({
      kind: 'denied',
      toolName: 'bash',
      reason: 'never delete trees',
      refusal: 'policy',
      overridable: false,
      allowed: false,
    });
  });
});

test('the denial card answers for every refusal of review and nothing else', () => {
  const codes: ErrorCode[] = ['AUTO_REVIEW_DENIED', 'AUTO_REVIEW_FAILED', 'AUTO_REVIEW_TIMEOUT'];
  for (const code of codes) expect(isReviewRefusal(refused(code, undefined).result)).toBe(true);
  expect(isReviewRefusal(refused('TOOL_FAILED', undefined).result)).toBe(false);
  expect(isReviewRefusal(undefined)).toBe(false);
});
