import {
  createToolCallHooks,
  type ChildSessionFeed,
  type ToolCallShared,
} from '@qilin-agent/client-ui-tool';
import { ConversationStore } from '@qilin-agent/protocol';
import type { SlotRegistry } from '@qilin-agent/slots';
import { AGENT_CASES, CHILD_SESSION } from './agents';
import { FamilySection } from './FamilySection';
import { FIXTURES } from './fixtures';

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

/** The gallery's host follows one child, the recorded session; its tree does not change. */
const SHARED: { tool: ToolCallShared } = {
  tool: {
    useToolCallArgumentsPartial: () => '',
    usePreviousToolCall: () => undefined,
    useChildSession: (sessionId) => (sessionId === CHILD_SESSION ? CHILD_FEED : undefined),
  },
};

/** The agent family's cards, hand-made on the agreed output shapes, in every state. */
export function AgentSection(props: {
  registry: SlotRegistry;
  openFile: (path: string) => void;
  inspect: (callId: string) => void;
}) {
  return (
    <FamilySection
      family="agents"
      title="Agents (hand-made)"
      cases={AGENT_CASES}
      shared={SHARED}
      {...props}
    />
  );
}
