import type {
  AutoReviewRecord,
  ErrorCode,
  ReviewGrant,
  ToolNode,
  ToolOutcome,
} from '@qilin-agent/protocol';
import type { FamilyCase } from './familyCases';

const REVIEWER = 'scripted:reviewer.yaml';

/** A review by the gallery's reviewer model. */
function judged(
  verdict: AutoReviewRecord['verdict'],
  userReason: string,
  extra: Partial<AutoReviewRecord> = {},
): AutoReviewRecord {
  return {
    reviewer: REVIEWER,
    verdict,
    userReason,
    latencyMs: verdict === 'timed_out' ? 90_000 : 840,
    inputTokens: 1_260,
    outputTokens: 74,
    ...extra,
  };
}

/** How a call ended: ran `ok` with `text`, or refused with `code` and the person's reason. */
function ended(text: string, code?: ErrorCode, userReason?: string): ToolOutcome {
  if (code === undefined) {
    return { status: 'ok', content: [{ type: 'text', text }], durationMs: 1_840 };
  }
  return {
    status: 'denied',
    errorCode: code,
    content: [{ type: 'text', text }],
    ...(userReason === undefined ? {} : { userReason }),
    durationMs: 0,
  };
}

/** A call judged by `review`, ended as `outcome`. */
function call(
  callId: string,
  toolName: string,
  args: unknown,
  review: AutoReviewRecord | undefined,
  outcome: ToolOutcome,
  parentCallId?: string,
): ToolNode {
  return {
    callId,
    toolName,
    caller: parentCallId === undefined ? 'direct' : 'code',
    ...(parentCallId === undefined ? {} : { parentCallId }),
    phase: 'done',
    arguments: args,
    progress: '',
    requests: [],
    ...(review === undefined ? {} : { review }),
    outcome,
    subCalls: [],
  };
}

const PUSH = { command: 'git push --force origin main' };

const DENIAL = judged('deny', 'Force-pushing to main rewrites history\nthe whole team shares.', {
  risk: 'high',
});

const MODEL_MESSAGE =
  'The reviewer refused: force-pushing to main rewrites shared history. Do not retry the same call; push to a branch or ask the user.';

/** The refused push a person allowed afterwards, and the retry that ran by their grant. */
const GRANT: ReviewGrant = {
  id: 'grant_01',
  callId: 'call_r5',
  toolName: 'bash',
  arguments: PUSH,
  grantedAt: '2026-03-02T08:04:10Z',
  usedBy: 'call_r6',
};

/** The grants the section's trees see, by call id. */
export const REVIEW_GRANTS: ReadonlyMap<string, ReviewGrant> = new Map([
  ['call_r5', GRANT],
  ['call_r6', GRANT],
]);

/**
 * Auto review's cards: refused by the reviewer model, refused after it failed or timed out,
 * allowed by it (the quiet mark), asked of a person after a timeout, a refusal a person allowed
 * and the retry that ran by the grant, and both marks and a refusal nested under `run_code`.
 */
export const REVIEW_CASES: readonly FamilyCase[] = [
  {
    id: 'bash-denied',
    node: call(
      'call_r1',
      'bash',
      PUSH,
      DENIAL,
      ended(MODEL_MESSAGE, 'AUTO_REVIEW_DENIED', DENIAL.userReason),
    ),
  },
  {
    id: 'bash-failed',
    node: call(
      'call_r2',
      'bash',
      { command: 'npm publish' },
      judged('failed', 'the reviewer answered something that is not a verdict', {
        fallback: 'unattended_policy',
      }),
      ended(
        'Auto review failed and nobody attends this session, so the call was refused. Try another approach.',
        'AUTO_REVIEW_FAILED',
        'the reviewer answered something that is not a verdict',
      ),
    ),
  },
  {
    id: 'bash-timed-out',
    node: call(
      'call_r3',
      'bash',
      { command: 'terraform apply -auto-approve' },
      judged('timed_out', 'the reviewer did not answer within 90 s', {
        fallback: 'unattended_policy',
      }),
      ended(
        'Auto review timed out and nobody attends this session, so the call was refused.',
        'AUTO_REVIEW_TIMEOUT',
        'the reviewer did not answer within 90 s',
      ),
    ),
  },
  {
    id: 'bash-reviewed',
    node: call(
      'call_r4',
      'bash',
      { command: 'cargo test -p upload' },
      judged('allow', 'Running the tests only reads and builds inside the workspace.', {
        risk: 'low',
      }),
      ended('test result: ok. 12 passed; 0 failed'),
    ),
  },
  {
    id: 'bash-granted',
    node: call(
      'call_r5',
      'bash',
      PUSH,
      DENIAL,
      ended(MODEL_MESSAGE, 'AUTO_REVIEW_DENIED', DENIAL.userReason),
    ),
  },
  {
    id: 'bash-retried',
    node: call('call_r6', 'bash', PUSH, undefined, ended('+ 1a2b3c4...5d6e7f8 main -> main')),
  },
  {
    id: 'bash-asked',
    node: call(
      'call_r7',
      'bash',
      { command: 'rm -rf target/' },
      judged('timed_out', 'the reviewer did not answer within 90 s', {
        fallback: 'asked_person',
      }),
      ended(''),
    ),
  },
  {
    id: 'run_code-nested',
    node: {
      ...call(
        'call_r8',
        'run_code',
        {
          code: 'await sdk.tool.call("bash", command="cargo build --release")\nawait sdk.tool.call("bash", command="scp target/release/app prod:/srv/")',
        },
        undefined,
        ended('PermissionError: the second call was refused'),
      ),
      subCalls: [
        call(
          'call_r8.1',
          'bash',
          { command: 'cargo build --release' },
          judged('allow', 'A release build stays inside the workspace.', { risk: 'medium' }),
          ended('Finished `release` profile [optimized] target(s) in 41.02s'),
          'call_r8',
        ),
        call(
          'call_r8.2',
          'bash',
          { command: 'scp target/release/app prod:/srv/' },
          judged('deny', 'Copying to the production host deploys it.', { risk: 'high' }),
          ended(
            'The reviewer refused: copying to production deploys. Do not retry; ask the user.',
            'AUTO_REVIEW_DENIED',
            'Copying to the production host deploys it.',
          ),
          'call_r8',
        ),
      ],
    },
  },
];
