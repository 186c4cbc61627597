import '@qilin-agent/ui-primitives/styles.css';
import '@qilin-agent/client-ui-tool/styles.css';
import './gallery.css';
import {
  createToolCallHooks,
  registerBuiltinToolViews,
  ToolCallTree,
} from '@qilin-agent/client-ui-tool';
import { I18nProvider } from '@qilin-agent/i18n';
import { ConversationStore, type ToolNode } from '@qilin-agent/protocol';
import { SlotRegistry, SlotsProvider } from '@qilin-agent/slots';
import { Profiler, useSyncExternalStore } from 'react';
import { createRoot } from 'react-dom/client';
import { flushSync } from 'react-dom';
import { syntheticTranscript } from './synthetic';

/** What the page measured; the bench script reads it. */
interface BenchResult {
  calls: number;
  firstRenderMs: number;
  firstPaintMs: number;
  argumentDelta: Series;
  nestedProgress: Series;
  done: true;
}

interface Series {
  updates: number;
  medianMs: number;
  p95Ms: number;
  maxMs: number;
  /** Root call trees that rendered per update (1 means only the streaming call's). */
  treesRenderedPerUpdate: number;
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
const registry = new SlotRegistry();
registerBuiltinToolViews(registry);
const shared = { tool: createToolCallHooks(store) };

/** Root trees that committed since the last reset. */
const committed = new Set<string>();

function roots(): ToolNode[] {
  return store
    .getTree()
    .turns.flatMap((turn) =>
      turn.items.flatMap((item) => (item.type === 'tool' ? [item.node] : [])),
    );
}

function Transcript() {
  const tree = useSyncExternalStore(store.subscribe, store.getTree);
  return (
    <ol className="bench-transcript">
      {tree.turns.flatMap((turn) =>
        turn.items.map((item) =>
          item.type === 'tool' ? (
            <li key={item.node.callId}>
              <Profiler id={item.node.callId} onRender={(id) => committed.add(id)}>
                <ToolCallTree node={item.node} cwd="/home/qilin/workspace" home="/home/qilin" />
              </Profiler>
            </li>
          ) : null,
        ),
      )}
    </ol>
  );
}

function statistics(samples: number[], trees: number): Series {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  return {
    updates: samples.length,
    medianMs: at(0.5),
    p95Ms: at(0.95),
    maxMs: sorted[sorted.length - 1] ?? 0,
    treesRenderedPerUpdate: trees,
  };
}

/** Applies `updates` events at 100 a second, each rendered synchronously and timed. */
function stream(make: (index: number) => unknown): Promise<Series> {
  return new Promise((resolve) => {
    const samples: number[] = [];
    let treesMax = 0;
    let index = 0;
    const timer = setInterval(() => {
      committed.clear();
      const started = performance.now();
      flushSync(() => store.apply(make(index)));
      samples.push(performance.now() - started);
      treesMax = Math.max(treesMax, committed.size);
      index += 1;
      if (index === UPDATES) {
        clearInterval(timer);
        resolve(statistics(samples, treesMax));
      }
    }, 10);
  });
}

const nextFrame = () =>
  new Promise<void>((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));

async function run(): Promise<void> {
  const container = document.getElementById('root') as HTMLElement;
  const root = createRoot(container);
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
