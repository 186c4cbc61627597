import '@qilin-agent/ui-primitives/styles.css';
import '@qilin-agent/client-ui-tool/styles.css';
import './gallery.css';
import {
  BUILTIN_TOOL_VIEWS,
  createToolCallHooks,
  TOOL_VIEW_SLOT,
  ToolCallTree,
  type ToolCallOwnerProps,
} from '@qilin-agent/client-ui-tool';
import { I18nProvider } from '@qilin-agent/i18n';
import { ConversationStore, type ToolNode } from '@qilin-agent/protocol';
import { SlotRegistry, SlotsProvider } from '@qilin-agent/slots';
import { memo, useSyncExternalStore, type ComponentType } from 'react';
import { flushSync } from 'react-dom';
import { createRoot } from 'react-dom/client';
import { syntheticTranscript } from './synthetic';

/** One series of updates, each rendered synchronously and timed. */
interface Series {
  updates: number;
  medianMs: number;
  p95Ms: number;
  maxMs: number;
  /** Tool views (cards) rendered per update, at most. */
  viewsRenderedPerUpdate: number;
  /** Calls whose DOM changed per update, at most (1: only the updated call's row). */
  callsChangedPerUpdate: number;
}

/** What the page measured; the bench script reads it. */
interface BenchResult {
  calls: number;
  firstRenderMs: number;
  firstPaintMs: number;
  argumentDelta: Series;
  nestedProgress: Series;
  done: true;
}

declare global {
  interface Window {
    __QILIN_BENCH__?: BenchResult;
  }
}

const params = new URLSearchParams(window.location.search);
const CALLS = Number(params.get('calls') ?? 2000);
const UPDATES = Number(params.get('updates') ?? 300);

const { events, streamingCallId, nestedCallId } = syntheticTranscript(CALLS);
const store = new ConversationStore(events);
const shared = { tool: createToolCallHooks(store) };

/** The call views rendered since the last reset: every built-in view, wrapped in a counter. */
const rendered = new Set<string>();
const registry = new SlotRegistry();
for (const [key, View] of Object.entries(BUILTIN_TOOL_VIEWS) as [
  string,
  ComponentType<ToolCallOwnerProps>,
][]) {
  registry.register({ name: TOOL_VIEW_SLOT, key }, function Counted(props: ToolCallOwnerProps) {
    rendered.add(props.callId);
    return <View {...props} />;
  });
}

function roots(): ToolNode[] {
  return store
    .getSnapshot()
    .tree.turns.flatMap((turn) =>
      turn.items.flatMap((item) => (item.type === 'tool' ? [item.node] : [])),
    );
}

/** One root call of the transcript, memoised on its node as a conversation view would be. */
const RootCall = memo(function RootCall(props: { node: ToolNode }) {
  return (
    <li>
      <ToolCallTree node={props.node} cwd="/home/qilin/workspace" home="/home/qilin" />
    </li>
  );
});

function Transcript() {
  const tree = useSyncExternalStore(store.subscribe, () => store.getSnapshot().tree);
  return (
    <ol className="bench-transcript">
      {tree.turns.flatMap((turn) =>
        turn.items.map((item) =>
          item.type === 'tool' ? <RootCall key={item.node.callId} node={item.node} /> : null,
        ),
      )}
    </ol>
  );
}

function statistics(samples: number[], views: number, calls: number): Series {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  return {
    updates: samples.length,
    medianMs: at(0.5),
    p95Ms: at(0.95),
    maxMs: sorted[sorted.length - 1] ?? 0,
    viewsRenderedPerUpdate: views,
    callsChangedPerUpdate: calls,
  };
}

/** The innermost calls whose DOM the mutations touched. */
function changedCalls(records: MutationRecord[]): Set<string> {
  const calls = new Set<string>();
  for (const record of records) {
    const target = record.target instanceof Element ? record.target : record.target.parentElement;
    const call = target?.closest('[data-chat-call-id]')?.getAttribute('data-chat-call-id');
    if (call) calls.add(call);
  }
  return calls;
}

/** Applies `UPDATES` events at 100 a second, each rendered synchronously and timed. */
function stream(make: (index: number) => unknown): Promise<Series> {
  const observer = new MutationObserver(() => undefined);
  observer.observe(document.getElementById('root') as HTMLElement, {
    subtree: true,
    childList: true,
    characterData: true,
    attributes: true,
  });
  return new Promise((resolve) => {
    const samples: number[] = [];
    let viewsMax = 0;
    let callsMax = 0;
    let index = 0;
    const timer = setInterval(() => {
      rendered.clear();
      observer.takeRecords();
      const started = performance.now();
      flushSync(() => store.apply(make(index)));
      samples.push(performance.now() - started);
      viewsMax = Math.max(viewsMax, rendered.size);
      callsMax = Math.max(callsMax, changedCalls(observer.takeRecords()).size);
      index += 1;
      if (index === UPDATES) {
        clearInterval(timer);
        observer.disconnect();
        resolve(statistics(samples, viewsMax, callsMax));
      }
    }, 10);
  });
}

const nextFrame = () =>
  new Promise<void>((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));

async function run(): Promise<void> {
  const root = createRoot(document.getElementById('root') as HTMLElement);
  const started = performance.now();
  flushSync(() =>
    root.render(
      <I18nProvider locale="en">
        <SlotsProvider registry={registry} shared={shared}>
          <main className="gallery">
            <h1>{CALLS} calls</h1>
            <Transcript />
          </main>
        </SlotsProvider>
      </I18nProvider>,
    ),
  );
  const firstRenderMs = performance.now() - started;
  await nextFrame();
  const firstPaintMs = performance.now() - started;
  const count = roots().reduce(function total(sum: number, node: ToolNode): number {
    return node.subCalls.reduce(total, sum + 1);
  }, 0);
  let seq = events.length;
  const argumentDelta = await stream(() => ({
    seq: (seq += 1),
    type: 'tool.preparing',
    callId: streamingCallId,
    toolName: 'write',
    argumentsDelta: 'Lorem ipsum dolor sit amet, consectetur adipiscing elit. ',
  }));
  // The nested shell call open, so that its terminal shows the live output.
  const toggle = document.querySelector<HTMLButtonElement>(
    `[data-chat-call-id="${nestedCallId}"] button.qp-row__main`,
  );
  flushSync(() => toggle?.click());
  const nestedProgress = await stream((index) => ({
    seq: (seq += 1),
    type: 'tool.progress',
    callId: nestedCallId,
    text: `   Compiling crate_${index} v0.1.0\n`,
  }));
  const result: BenchResult = {
    calls: count,
    firstRenderMs,
    firstPaintMs,
    argumentDelta,
    nestedProgress,
    done: true,
  };
  window.__QILIN_BENCH__ = result;
  const report = document.createElement('pre');
  report.id = 'bench-result';
  report.textContent = JSON.stringify(result, null, 2);
  document.body.prepend(report);
}

void run();
