import {
  callState,
  previousCall,
  registerBuiltinToolViews,
  ToolCallTree,
  type ToolCallShared,
} from '@qilin-agent/client-ui-tool';
import { I18nProvider, type Locale } from '@qilin-agent/i18n';
import { SlotRegistry, SlotsProvider } from '@qilin-agent/slots';
import { registerSkillView } from '@qilin-agent/ui-skill';
import { useCallback, useMemo, useState } from 'react';
import { FAMILIES } from './families';
import { FamilySection } from './FamilySection';
import { casesOf, FIXTURE_HOME, workspaceOf, type GalleryCase } from './cases';
import { FIXTURES } from './fixtures';
import { SESSION_QUERIES, TWO_LEVELS } from './handmade';

/** The views every page uses: the built-in ones and the skill package's. */
function createRegistry(): SlotRegistry {
  const registry = new SlotRegistry();
  registerBuiltinToolViews({ slots: registry });
  registerSkillView({ slots: registry });
  return registry;
}

/** The shared hooks of one case: the call's argument text and the tree as they were then. */
function frozenHooks(entry: GalleryCase): { tool: ToolCallShared } {
  return {
    tool: {
      useToolCallArgumentsPartial: (callId) => entry.preparing.get(callId) ?? '',
      usePreviousToolCall: (callId, toolName) => previousCall(entry.tree, callId, toolName),
    },
  };
}

function stateOf(entry: GalleryCase): string {
  // The tree's waiting phase is the row's waiting state (the request itself is in the tree).
  if (entry.phase === 'waiting') return 'waiting';
  return callState({
    phase:
      entry.phase === 'preparing' ? 'preparing' : entry.phase === 'running' ? 'start' : 'result',
    ...(entry.status === undefined
      ? {}
      : { result: { status: entry.status, content: [], durationMs: 0 } as never }),
  });
}

function Case(props: { entry: GalleryCase; cwd: string; host: Host }) {
  const { entry, cwd, host } = props;
  const shared = useMemo(() => frozenHooks(entry), [entry]);
  const registry = host.registry;
  const state = stateOf(entry);
  const headingId = `case-${entry.id.replace(/[^A-Za-z0-9_-]/g, '-')}`;
  return (
    <article
      className="gallery-case"
      data-gallery-case={entry.id}
      data-tool={entry.toolName}
      data-call-id={entry.callId}
      data-state={state}
      aria-labelledby={headingId}
    >
      <h3 id={headingId} className="gallery-case__title">
        {entry.toolName} · {state} <span className="gallery-case__id">{entry.callId}</span>
      </h3>
      <SlotsProvider registry={registry} shared={shared}>
        <ToolCallTree
          node={entry.root}
          cwd={cwd}
          home={FIXTURE_HOME}
          openFile={host.openFile}
          inspect={host.inspect}
        />
      </SlotsProvider>
    </article>
  );
}

interface Host {
  registry: SlotRegistry;
  openFile: (path: string) => void;
  inspect: (callId: string) => void;
}

const LOGS = FIXTURES.map(([name, source]) => ({
  name,
  cwd: workspaceOf(source),
  cases: casesOf(name, source),
}));

/** The hand-made sections in the table of contents: the two trees, then every tool family. */
const HANDMADE_NAV: readonly { anchor: string; label: string }[] = [
  { anchor: 'handmade', label: 'two levels (hand-made)' },
  { anchor: 'session-queries-shapes', label: 'session queries (hand-made)' },
  ...FAMILIES.map(({ family, title }) => ({
    anchor: family,
    label: title.charAt(0).toLowerCase() + title.slice(1),
  })),
];

/** Every card of every recorded log in every state it went through, and the hand-made tree. */
export function Gallery(props: { locale: Locale }) {
  const registry = useMemo(() => createRegistry(), []);
  const [said, setSaid] = useState('');
  const openFile = useCallback((path: string) => setSaid(`openFile(${JSON.stringify(path)})`), []);
  const inspect = useCallback(
    (callId: string) => setSaid(`inspect(${JSON.stringify(callId)})`),
    [],
  );
  const allowCall = useCallback(async (callId: string) => {
    setSaid(`allowCall(${JSON.stringify(callId)})`);
  }, []);
  const host = useMemo(() => ({ registry, openFile, inspect }), [registry, openFile, inspect]);
  const total = LOGS.reduce((sum, log) => sum + log.cases.length, 0);
  return (
    <I18nProvider locale={props.locale}>
      <div className="gallery">
        <header className="gallery__header">
          <h1>Qilin tool cards</h1>
          <p>
            {total} cards in every state, rendered from {LOGS.length} recorded session logs.{' '}
            <a href="?lang=en" lang="en">
              English
            </a>{' '}
            ·{' '}
            <a href="?lang=zh-CN" lang="zh-CN">
              简体中文
            </a>{' '}
            · <a href={`?lang=${props.locale}&theme=light`}>light</a> ·{' '}
            <a href={`?lang=${props.locale}&theme=dark`}>dark</a>
          </p>
          <p className="gallery__host" role="status" aria-live="polite">
            {said === '' ? 'Host callbacks appear here.' : `Host: ${said}`}
          </p>
          <nav aria-label="Logs">
            <ul className="gallery__nav">
              {LOGS.map((log) => (
                <li key={log.name}>
                  <a href={`#log-${log.name}`}>{log.name}</a>
                </li>
              ))}
              {HANDMADE_NAV.map(({ anchor, label }) => (
                <li key={anchor}>
                  <a href={`#log-${anchor}`}>{label}</a>
                </li>
              ))}
            </ul>
          </nav>
        </header>
        <main>
          {LOGS.map((log) => (
            <section
              key={log.name}
              id={`log-${log.name}`}
              className="gallery__log"
              aria-labelledby={`title-${log.name}`}
            >
              <h2 id={`title-${log.name}`}>{log.name}</h2>
              {log.cases.map((entry) => (
                <Case key={entry.id} entry={entry} cwd={log.cwd} host={host} />
              ))}
            </section>
          ))}
          <section id="log-handmade" className="gallery__log" aria-labelledby="title-handmade">
            <h2 id="title-handmade">Two levels of nesting (hand-made)</h2>
            <article
              className="gallery-case"
              data-gallery-case="handmade/two-levels"
              data-tool="run_code"
              data-state="ok"
            >
              <SlotsProvider registry={registry}>
                <ToolCallTree
                  node={TWO_LEVELS}
                  cwd="/home/qilin/workspace"
                  home={FIXTURE_HOME}
                  openFile={openFile}
                  inspect={inspect}
                />
              </SlotsProvider>
            </article>
          </section>
          <section
            id="log-session-queries-shapes"
            className="gallery__log"
            aria-labelledby="title-session-queries-shapes"
          >
            <h2 id="title-session-queries-shapes">Session queries (hand-made)</h2>
            {SESSION_QUERIES.map((node) => (
              <article
                key={node.callId}
                className="gallery-case"
                data-gallery-case={`handmade/${node.toolName}`}
                data-tool={node.toolName}
                data-call-id={node.callId}
                data-state="ok"
              >
                <SlotsProvider registry={registry}>
                  <ToolCallTree node={node} openFile={openFile} inspect={inspect} />
                </SlotsProvider>
              </article>
            ))}
          </section>
          {FAMILIES.map(({ allowsCalls, ...family }) => (
            <FamilySection
              key={family.family}
              {...family}
              registry={registry}
              openFile={openFile}
              inspect={inspect}
              {...(allowsCalls === true ? { allowCall } : {})}
            />
          ))}
        </main>
      </div>
    </I18nProvider>
  );
}
