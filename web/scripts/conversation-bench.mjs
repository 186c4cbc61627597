// The web conversation's benchmark, against a real `qilin serve` in Debian's Chromium:
//
// 1. a recorded session of 5,000 calls (100 root run_code calls, each making 49 nested `read`
//    calls through code mode) is made by the scripted model in a temp workspace's store;
// 2. opening it: the time from navigation until its last turn is rendered and the composer
//    takes a typed key (and how many call views it rendered, how many wait behind "Show N more
//    calls": together, every call);
// 3. scrolling its transcript from top to bottom: the long tasks the Performance API reports;
// 4. a live turn streaming text at about 200 events a second (`chunk_delay_ms: 4`, 12 bytes an
//    event) while a person types in the composer: each key's latency, keydown to the next paint.
//
//   npm --prefix web run build:app && cargo build -p qilin-cli
//   npm --prefix web run bench:conversation      (BENCH_RUNS=N for more runs; QILIN_BIN, QILIN_CHROMIUM)
//
// The figures are the medians of the runs.
import { chromium } from '@playwright/test';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const web = fileURLToPath(new URL('..', import.meta.url));
const runs = Number(process.env.BENCH_RUNS ?? 3);
const binary = process.env.QILIN_BIN ?? join(web, '../target/debug/qilin');
if (!existsSync(binary)) {
  console.error(
    `no qilin binary at ${binary}: build it with \`npm --prefix web run build:app && cargo build -p qilin-cli\` (or set QILIN_BIN)`,
  );
  process.exit(1);
}

const ROOTS_PER_STEP = 10;
const STEPS = 10;
const NESTED = 49;
const CALLS = ROOTS_PER_STEP * STEPS * (1 + NESTED);
const LIVE_CHUNKS = 1600;
const CHUNK_BYTES = 12;

const AGENT = `name: bench
description: Records the web conversation benchmark's session.
instructions: Follow the script.
tools: [read]
code_mode: true
skills:
  available: []
limits:
  max_steps: ${STEPS + 5}
`;

const code = `for i in range(${NESTED}):\n    sdk.tool.call("read", {"path": "notes.md"})\nprint("read ${NESTED} times")\n`;
const rootCalls = Array.from({ length: ROOTS_PER_STEP }, () => ({
  tool: 'run_code',
  args: { code },
}));
// Text of LIVE_CHUNKS events: Markdown paragraphs of words.
const words = 'the stream goes on with plain words and some **bold** ones';
let live = '';
while (live.length < LIVE_CHUNKS * CHUNK_BYTES) {
  live += `${words} `;
  if (live.length % 400 < words.length) live += '\n\n';
}
live = live.slice(0, LIVE_CHUNKS * CHUNK_BYTES);
const turns = [
  ...Array.from({ length: STEPS }, () => ({ calls: rootCalls })),
  { say: 'All calls made.' },
  ...Array.from({ length: runs }, () => ({ say: live })),
];
const SCRIPT = JSON.stringify({ chunk_delay_ms: 4, turns });

const workspace = mkdtempSync(join(tmpdir(), 'qilin-conversation-bench-'));
writeFileSync(join(workspace, 'bench.agent'), AGENT);
writeFileSync(join(workspace, 'script.yaml'), SCRIPT);
writeFileSync(join(workspace, 'notes.md'), '# Notes\n\nA short file read many times.\n');

const server = spawn(
  binary,
  [
    'serve',
    '--workspace',
    workspace,
    '--no-sandbox',
    '--agent',
    'bench.agent',
    '--model',
    'scripted:script.yaml',
  ],
  { cwd: workspace, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } },
);
let output = '';
const url = await new Promise((resolve, reject) => {
  const hear = (chunk) => {
    output += String(chunk);
    const found = /(http:\/\/127\.0\.0\.1:\d+\/\S*#token=\S+)/.exec(output);
    if (found?.[1] !== undefined) resolve(found[1]);
  };
  server.stdout.on('data', hear);
  server.stderr.on('data', hear);
  server.on('exit', (code) => reject(new Error(`qilin serve exited (${code}):\n${output}`)));
});

const browser = await chromium.launch({
  executablePath: process.env.QILIN_CHROMIUM ?? '/usr/bin/chromium',
  args: [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ],
});

/** Sends `text` from the composer and waits until `turns` turns have ended. */
async function send(page, text, turns, timeout) {
  const prompt = page.getByRole('textbox', { name: 'Prompt' });
  await prompt.fill(text);
  await prompt.press('Enter');
  await page
    .locator('[data-turn-state]:not([data-turn-state="running"])')
    .nth(turns - 1)
    .waitFor({ timeout });
}

const results = [];
try {
  // Record the session.
  const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  const setup = await context.newPage();
  await setup.goto(url);
  await setup.getByRole('button', { name: 'New session' }).click();
  await setup.waitForURL(/\/sessions\//);
  const sessionUrl = setup.url();
  const recordStart = Date.now();
  await send(setup, 'Make the calls.', 1, 600_000);
  const recordSeconds = (Date.now() - recordStart) / 1000;
  const rendered = await setup.locator('[data-chat-call-id]').count();
  await setup.close();
  console.log(`recorded ${CALLS} calls in ${recordSeconds.toFixed(1)} s (${rendered} call views)`);

  for (let run = 0; run < runs; run += 1) {
    const page = await context.newPage();
    await page.addInitScript(() => {
      const state = { longTasks: [], keys: [], events: [] };
      globalThis.__bench = state;
      new PerformanceObserver((list) => {
        for (const entry of list.getEntries())
          state.longTasks.push({ start: entry.startTime, duration: entry.duration });
      }).observe({ type: 'longtask', buffered: true });
      new PerformanceObserver((list) => {
        for (const entry of list.getEntries())
          if (entry.name === 'keydown') state.events.push(entry.duration);
      }).observe({ type: 'event', durationThreshold: 16, buffered: true });
      globalThis.addEventListener(
        'keydown',
        (event) => {
          if (!state.measureKeys) return;
          globalThis.requestAnimationFrame(() =>
            setTimeout(() => state.keys.push(performance.now() - event.timeStamp)),
          );
        },
        true,
      );
    });

    // 1. Open: navigation to the last turn rendered and a key typed into the composer.
    const start = Date.now();
    await page.goto(sessionUrl, { waitUntil: 'commit' });
    await page.locator('[data-turn-state="completed"]').last().waitFor({ timeout: 60_000 });
    const prompt = page.getByRole('textbox', { name: 'Prompt' });
    await prompt.focus();
    await page.keyboard.type('x');
    await page.waitForFunction(
      () => globalThis.document.querySelector('textarea')?.value === 'x',
      null,
      {
        polling: 'raf',
      },
    );
    const openMs = Date.now() - start;
    await prompt.fill('');
    const calls = await page.locator('[data-chat-call-id]').count();
    // The calls a finished `run_code` folds behind its "Show N more calls" button.
    const folded = await page.evaluate(() =>
      [...globalThis.document.querySelectorAll('.qt-call__more')].reduce(
        (sum, button) => sum + Number(/\d+/.exec(button.textContent ?? '')?.[0] ?? 0),
        0,
      ),
    );

    // 2. Scroll the transcript top to bottom, a wheel step at a time.
    await page.waitForTimeout(500);
    const scroll = await page.evaluate(async () => {
      const transcript = globalThis.document.querySelector('.qc-transcript');
      transcript.scrollTop = 0;
      await new Promise((done) => setTimeout(done, 300));
      const from = performance.now();
      while (transcript.scrollTop + transcript.clientHeight < transcript.scrollHeight - 1) {
        transcript.scrollTop += 400;
        await new Promise((done) => globalThis.requestAnimationFrame(() => done()));
      }
      await new Promise((done) => setTimeout(done, 300));
      const tasks = globalThis.__bench.longTasks.filter((task) => task.start >= from);
      return {
        height: transcript.scrollHeight,
        ms: performance.now() - from,
        longTasks: tasks.length,
        longestMs: Math.max(0, ...tasks.map((task) => task.duration)),
      };
    });

    // 3. A live turn at ~200 events a second, typing in the composer meanwhile.
    await prompt.fill('Stream some text.');
    await prompt.press('Enter');
    await page.locator('[data-turn-state="running"]').waitFor();
    const streamStart = Date.now();
    await page.evaluate(() => (globalThis.__bench.measureKeys = true));
    await prompt.focus();
    await page.keyboard.type('typing while the model streams its answer', { delay: 60 });
    await page.evaluate(() => (globalThis.__bench.measureKeys = false));
    await page
      .locator('[data-turn-state]:not([data-turn-state="running"])')
      .nth(1 + run)
      .waitFor({ timeout: 120_000 });
    const streamSeconds = (Date.now() - streamStart) / 1000;
    const typed = await page.evaluate(() => globalThis.__bench);
    const sorted = [...typed.keys].sort((a, b) => a - b);
    results.push({
      calls,
      folded,
      openMs,
      scroll,
      eventsPerSecond: LIVE_CHUNKS / streamSeconds,
      keyMedianMs: sorted[Math.floor(sorted.length / 2)],
      keyMaxMs: sorted[sorted.length - 1],
      slowKeyEvents: typed.events.length,
    });
    await page.close();
    // The next run starts from the recorded session and the turns streamed so far.
  }
  await context.close();
} finally {
  await browser.close();
  server.kill('SIGINT');
  await new Promise((done) => server.once('exit', done));
  rmSync(workspace, { recursive: true, force: true });
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const pick = (read) => median(results.map(read));
const ms = (value) => `${value.toFixed(1)} ms`;
console.log(
  `Chromium ${browser.version()}, a ${CALLS}-call session (${results[0].calls} call views at open, ${results[0].folded} more behind "Show N more calls"), median of ${runs} runs`,
);
console.log(`open to interactive:              ${ms(pick((r) => r.openMs))}   target < 1500 ms`);
console.log(
  `scroll top to bottom:             longest task ${ms(pick((r) => r.scroll.longestMs))}, ${pick((r) => r.scroll.longTasks)} long tasks over ${ms(pick((r) => r.scroll.ms))} (${pick((r) => r.scroll.height)} px)   target: no task > 50 ms`,
);
console.log(
  `typing while streaming:           ${ms(pick((r) => r.keyMedianMs))} median, ${ms(pick((r) => r.keyMaxMs))} max keydown→paint, ${pick((r) => r.slowKeyEvents)} keydowns ≥ 16 ms by Event Timing (${pick((r) => r.eventsPerSecond).toFixed(0)} events/s)   target < 50 ms`,
);
