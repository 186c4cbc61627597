import { ToolCallTree } from '@qilin-agent/client-ui-tool';
import type { ReviewGrant } from '@qilin-agent/protocol';
import { SlotsProvider, type SlotRegistry, type SlotShared } from '@qilin-agent/slots';
import type { FamilyCase } from './familyCases';

/** One tool family's hand-made cases, on the agreed output shapes, each in its own article. */
export function FamilySection(props: {
  /** The family's name in ids: `log-<family>`, `handmade/<family>/<case>`. */
  family: string;
  title: string;
  cases: readonly FamilyCase[];
  registry: SlotRegistry;
  shared?: Partial<SlotShared>;
  openFile: (path: string) => void;
  inspect: (callId: string) => void;
  /** The host's "Allow this call", for a family whose calls review refused. */
  allowCall?: (callId: string) => Promise<void>;
  /** The person's grants the family's trees see, by call id. */
  grants?: ReadonlyMap<string, ReviewGrant>;
  /** The home folder paths outside the workspace are shortened against. */
  home?: string;
}) {
  const { family, title, cases, registry, shared, openFile, inspect, allowCall, grants, home } =
    props;
  return (
    <section id={`log-${family}`} className="gallery__log" aria-labelledby={`title-${family}`}>
      <h2 id={`title-${family}`}>{title}</h2>
      {cases.map(({ id, node }) => (
        <article
          key={id}
          className="gallery-case"
          data-gallery-case={`handmade/${family}/${id}`}
          data-tool={node.toolName}
          data-call-id={node.callId}
          data-state={node.phase}
          aria-labelledby={`case-${family}-${id}`}
        >
          <h3 id={`case-${family}-${id}`} className="gallery-case__title">
            {node.toolName} · {id.slice(node.toolName.length + 1)}{' '}
            <span className="gallery-case__id">{node.callId}</span>
          </h3>
          <SlotsProvider registry={registry} {...(shared === undefined ? {} : { shared })}>
            <ToolCallTree
              node={node}
              cwd="/home/qilin/workspace"
              {...(home === undefined ? {} : { home })}
              openFile={openFile}
              inspect={inspect}
              {...(allowCall === undefined ? {} : { allowCall })}
              {...(grants === undefined ? {} : { grants })}
            />
          </SlotsProvider>
        </article>
      ))}
    </section>
  );
}
