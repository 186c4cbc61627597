import { ToolCallTree } from '@qilin-agent/client-ui-tool';
import { SlotsProvider, type SlotRegistry } from '@qilin-agent/slots';
import { GOAL_CASES } from './goals';

/** The checks and goal cards, hand-made on the agreed output shapes, in their states. */
export function GoalSection(props: {
  registry: SlotRegistry;
  openFile: (path: string) => void;
  inspect: (callId: string) => void;
}) {
  const { registry, openFile, inspect } = props;
  return (
    <section id="log-goals" className="gallery__log" aria-labelledby="title-goals">
      <h2 id="title-goals">Checks and goals (hand-made)</h2>
      {GOAL_CASES.map(({ id, node }) => (
        <article
          key={id}
          className="gallery-case"
          data-gallery-case={`handmade/goals/${id}`}
          data-tool={node.toolName}
          data-call-id={node.callId}
          data-state={node.phase}
          aria-labelledby={`case-goals-${id}`}
        >
          <h3 id={`case-goals-${id}`} className="gallery-case__title">
            {node.toolName} · {id.slice(node.toolName.length + 1)}{' '}
            <span className="gallery-case__id">{node.callId}</span>
          </h3>
          <SlotsProvider registry={registry}>
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
