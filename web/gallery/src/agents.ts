import type { ChildLink, ChildRecord } from '@qilin-agent/protocol';
import { callMaker, type FamilyCase } from './familyCases';

/** The child session the gallery's `agent` cards started (the recorded `files` session plays it). */
export const CHILD_SESSION = 'ses_child1';

/** The live link the runtime folds onto an `agent` call once its child exists. */
const CHILD_LINK: ChildLink = {
  sessionId: CHILD_SESSION,
  agent: 'explore',
  description: 'Find the retry logic',
  background: false,
};

const RECORD: ChildRecord = {
  sessionId: CHILD_SESSION,
  agent: 'explore',
  description: 'Find the retry logic',
  background: false,
  status: 'completed',
  answer:
    'Uploads retry in src/upload.rs (lines 40–62): five attempts, exponential backoff from 250 ms, only on 5xx and timeouts.',
  steps: 4,
  usage: {
    inputTokens: 18_250,
    outputTokens: 1_140,
    cacheReadTokens: 12_000,
    cacheWriteTokens: 2_100,
    costUsd: 0.0061,
  },
  durationMs: 6_400,
};

const SCOUT: ChildRecord = {
  sessionId: 'ses_child2',
  agent: 'explore',
  name: 'scout',
  description: 'Read the upload tests',
  background: true,
  status: 'running',
  steps: 2,
  usage: { inputTokens: 7_300, outputTokens: 210, cacheReadTokens: 0, cacheWriteTokens: 0 },
  durationMs: 2_100,
};

const AGENT_ARGS = {
  agent: 'explore',
  prompt: 'Find where uploads are retried and say how: attempts, delays, which errors.',
  description: 'Find the retry logic',
};

const node = callMaker({
  errorCode: 'TOOL_FAILED',
  text: 'Recorded child record.',
  durationMs: 6_450,
});

/** Every card of the agent family in every state, on outputs of the agreed shapes. */
export const AGENT_CASES: readonly FamilyCase[] = [
  { id: 'agent-preparing', node: node('call_a1', 'agent', 'preparing') },
  { id: 'agent-starting', node: node('call_a2', 'agent', 'running', AGENT_ARGS) },
  {
    id: 'agent-running',
    node: { ...node('call_a7', 'agent', 'running', AGENT_ARGS), child: CHILD_LINK },
  },
  {
    id: 'agent-completed',
    node: {
      ...node('call_a3', 'agent', 'done', AGENT_ARGS, { status: 'ok', output: RECORD }),
      child: CHILD_LINK,
    },
  },
  {
    id: 'agent-out-of-budget',
    node: node('call_a4', 'agent', 'done', AGENT_ARGS, {
      status: 'ok',
      output: {
        ...RECORD,
        status: 'out_of_budget',
        answer: undefined,
        error: 'The step budget of 4 steps was used up.',
      },
    }),
  },
  {
    id: 'agent-background',
    node: node(
      'call_a5',
      'agent',
      'done',
      { ...AGENT_ARGS, description: SCOUT.description, name: 'scout', background: true },
      { status: 'ok', output: SCOUT },
    ),
  },
  {
    id: 'agent-failed',
    node: node(
      'call_a6',
      'agent',
      'done',
      { ...AGENT_ARGS, agent: 'reviewer' },
      {
        status: 'error',
        text: 'No agent `reviewer`: the workspace has explore, general.',
      },
    ),
  },
  { id: 'agent_wait-running', node: node('call_w1', 'agent_wait', 'running', {}) },
  {
    id: 'agent_wait-timed-out',
    node: node(
      'call_w2',
      'agent_wait',
      'done',
      { timeout_ms: 30_000 },
      { status: 'ok', output: { finished: [RECORD], running: ['ses_child2'], timedOut: true } },
    ),
  },
  {
    id: 'agent_wait-failed',
    node: node(
      'call_w3',
      'agent_wait',
      'done',
      { ids: ['ses_gone'] },
      { status: 'error', text: 'No child `ses_gone` in this session.' },
    ),
  },
  {
    id: 'agent_list-done',
    node: node(
      'call_l1',
      'agent_list',
      'done',
      {},
      {
        status: 'ok',
        output: { children: [RECORD, SCOUT] },
      },
    ),
  },
  {
    id: 'agent_list-empty',
    node: node('call_l2', 'agent_list', 'done', {}, { status: 'ok', output: { children: [] } }),
  },
  { id: 'agent_stop-running', node: node('call_s1', 'agent_stop', 'running', { id: 'scout' }) },
  {
    id: 'agent_stop-interrupted',
    node: node(
      'call_s2',
      'agent_stop',
      'done',
      { id: 'scout' },
      {
        status: 'ok',
        output: { ...SCOUT, status: 'interrupted', error: 'Stopped by agent_stop.' },
      },
    ),
  },
  {
    id: 'agent_stop-already-ended',
    node: node(
      'call_s3',
      'agent_stop',
      'done',
      { id: 'ses_child1' },
      {
        status: 'ok',
        output: RECORD,
      },
    ),
  },
  {
    id: 'agent_send-now',
    node: node(
      'call_m1',
      'agent_send',
      'done',
      { to: 'scout', message: 'Also read the retry tests.' },
      {
        status: 'ok',
        output: { to: 'scout', sessionId: 'ses_child2', delivered: 'now' },
      },
    ),
  },
  {
    id: 'agent_send-queued',
    node: node(
      'call_m2',
      'agent_send',
      'done',
      { to: 'ses_child2', message: 'Stop after the first file.' },
      { status: 'ok', output: { to: 'ses_child2', sessionId: 'ses_child2', delivered: 'queued' } },
    ),
  },
  {
    id: 'agent_send-failed',
    node: node(
      'call_m3',
      'agent_send',
      'done',
      { to: 'nobody', message: 'hello' },
      {
        status: 'error',
        text: 'No child named `nobody`.',
      },
    ),
  },
];
