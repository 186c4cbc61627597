import {
  createToolCallHooks,
  type ChildSessionFeed,
  type ToolCallShared,
} from '@qilin-agent/client-ui-tool';
import { MarkdownText } from '@qilin-agent/ui-conversation';
import { ConversationStore, type ReviewGrant } from '@qilin-agent/protocol';
import { AGENT_CASES, CHILD_SESSION } from './agents';
import type { FamilyCase } from './familyCases';
import { FIXTURE_HOME } from './cases';
import { FIXTURES } from './fixtures';
import { LOOP_CASES, WORKFLOW_CASES } from './flows';
import { GOAL_CASES } from './goals';
import { LSP_CASES } from './lsp';
import { REVIEW_CASES, REVIEW_GRANTS } from './review';
import { SCHEDULE_CASES } from './schedules';
import { FIRST_LIST, LATER_LIST_CALL, TEAM_CASES } from './teams';

/** The recorded session the gallery's child plays: the `files` log, whole. */
function childFeed(): ChildSessionFeed | undefined {
  const log = FIXTURES.find(([name]) => name === 'files');
  if (log === undefined) return undefined;
  const store = new ConversationStore(
    log[1]
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as unknown),
  );
  return { status: 'live', tree: store.getSnapshot().tree, hooks: createToolCallHooks(store) };
}

const CHILD_FEED = childFeed();

/** The agent section's host follows one child, the recorded session; its tree does not change. */
const AGENT_SHARED: { tool: ToolCallShared } = {
  tool: {
    useToolCallArgumentsPartial: () => '',
    usePreviousToolCall: () => undefined,
    useChildSession: (sessionId) => (sessionId === CHILD_SESSION ? CHILD_FEED : undefined),
  },
};

/** The team section's host: the later task list's previous list is the first one. */
const TEAM_SHARED: { tool: ToolCallShared } = {
  tool: {
    useToolCallArgumentsPartial: () => '',
    usePreviousToolCall: (callId, toolName) =>
      callId === LATER_LIST_CALL && toolName === FIRST_LIST.toolName ? FIRST_LIST : undefined,
  },
};

/** The workflow section's host: it renders report sections as the page renders Markdown. */
const FLOW_SHARED: { tool: ToolCallShared } = {
  tool: {
    useToolCallArgumentsPartial: () => '',
    usePreviousToolCall: () => undefined,
    markdown: MarkdownText,
  },
};

/** One tool family's hand-made section of the gallery, and what its host gives the trees. */
export interface Family {
  /** The family's name in ids: `log-<family>`, `handmade/<family>/<case>`. */
  readonly family: string;
  /** The section's heading; the page's table of contents shows it too. */
  readonly title: string;
  readonly cases: readonly FamilyCase[];
  /** The host's shared hooks, when the family needs more than the defaults. */
  readonly shared?: { tool: ToolCallShared };
  /** The home folder paths outside the workspace are shortened against. */
  readonly home?: string;
  /** The person's grants the family's trees see, by call id. */
  readonly grants?: ReadonlyMap<string, ReviewGrant>;
  /** Whether the host offers "Allow this call" (for a family whose calls review refused). */
  readonly allowsCalls?: boolean;
}

/** The hand-made tool families, in the order the page shows them. */
export const FAMILIES: readonly Family[] = [
  { family: 'agents', title: 'Agents (hand-made)', cases: AGENT_CASES, shared: AGENT_SHARED },
  { family: 'goals', title: 'Checks and goals (hand-made)', cases: GOAL_CASES },
  { family: 'schedules', title: 'Scheduled tasks (hand-made)', cases: SCHEDULE_CASES },
  {
    family: 'auto-review',
    title: 'Auto review (hand-made)',
    cases: REVIEW_CASES,
    grants: REVIEW_GRANTS,
    allowsCalls: true,
  },
  {
    family: 'teams',
    title: 'Teammates and tasks (hand-made)',
    cases: TEAM_CASES,
    shared: TEAM_SHARED,
  },
  { family: 'lsp', title: 'Code navigation (hand-made)', cases: LSP_CASES, home: FIXTURE_HOME },
  {
    family: 'workflows',
    title: 'Workflows (hand-made)',
    cases: WORKFLOW_CASES,
    shared: FLOW_SHARED,
  },
  { family: 'loops', title: 'Loops (hand-made)', cases: LOOP_CASES },
];
