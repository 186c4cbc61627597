import { ToolCallTree } from '@qilin-agent/client-ui-tool';
import { SlotsProvider, type SlotRegistry } from '@qilin-agent/slots';
import { SCHEDULE_CASES } from './schedules';

/** The scheduled-task cards, hand-made on the agreed output shapes, in their states. */
export function ScheduleSection(props: {
  registry: SlotRegistry;
  openFile: (path: string) => void;
  inspect: (callId: string) => void;
}) {
  const { registry, openFile, inspect } = props;
  return (
    <section id="log-schedules" className="gallery__log" aria-labelledby="title-schedules">
      <h2 id="title-schedules">Scheduled tasks (hand-made)</h2>
      {SCHEDULE_CASES.map(({ id, node }) => (
        <article
          key={id}
          className="gallery-case"
          data-gallery-case={`handmade/schedules/${id}`}
          data-tool={node.toolName}
          data-call-id={node.callId}
          data-state={node.phase}
          aria-labelledby={`case-schedules-${id}`}
        >
          <h3 id={`case-schedules-${id}`} className="gallery-case__title">
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
