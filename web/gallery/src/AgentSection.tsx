import {
  createToolCallHooks,
  ToolCallTree,
  type ChildSessionFeed,
  type ToolCallShared,
} from '@qilin-agent/client-ui-tool';
import { ConversationStore } from '@qilin-agent/protocol';
import { SlotsProvider, type SlotRegistry } from '@qilin-agent/slots';
import { AGENT_CASES, CHILD_SESSION } from './agents';
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
  const { registry, openFile, inspect } = props;
  return (
    <section id="log-agents" className="gallery__log" aria-labelledby="title-agents">
      <h2 id="title-agents">Agents (hand-made)</h2>
      {AGENT_CASES.map(({ id, node }) => (
        <article
          key={id}
          className="gallery-case"
          data-gallery-case={`handmade/agents/${id}`}
          data-tool={node.toolName}
          data-call-id={node.callId}
          data-state={node.phase}
          aria-labelledby={`case-agents-${id}`}
        >
          <h3 id={`case-agents-${id}`} className="gallery-case__title">
            {node.toolName} · {id.slice(node.toolName.length + 1)}{' '}
            <span className="gallery-case__id">{node.callId}</span>
          </h3>
          <SlotsProvider registry={registry} shared={SHARED}>
            <ToolCallTree
              node={node}
              cwd="/home/qilin/workspace"
              openFile={openFile}
              inspect={inspect}
            />
          </SlotsProvider>
        </article>
      ))}
    </section>
  );
}
