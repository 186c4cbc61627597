// The tool-call display benchmark: a 2,000-call transcript (root run_code calls with four
// nested calls each) first rendered in Chromium, then 100 updates a second to one call —
// argument deltas of a preparing write, then live output of a nested shell call — each
// rendered and timed on its own.
//
//   npm run build && npm run bench            (from web/; BENCH_RUNS=N for more runs)
//
// Debian's Chromium (/usr/bin/chromium, or QILIN_CHROMIUM) runs the built page from
// gallery/dist, served by `vite preview`. The figures are the median of the runs.
import { chromium } from '@playwright/test';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const web = fileURLToPath(new URL('..', import.meta.url));
const runs = Number(process.env.BENCH_RUNS ?? 5);
const port = 4174;

if (!existsSync(`${web}/gallery/dist/bench.html`)) {
  console.error('gallery/dist/bench.html is missing: run `npm run build` in web/ first');
  process.exit(1);
}

const server = spawn(
  'npx',
  ['vite', 'preview', 'gallery', '--host', '127.0.0.1', '--port', String(port), '--strictPort'],
  {
    cwd: web,
    stdio: ['ignore', 'pipe', 'inherit'],
  },
);
await new Promise((resolve, reject) => {
  server.stdout.on('data', (chunk) => String(chunk).includes(String(port)) && resolve());
  server.on('exit', (code) => reject(new Error(`vite preview exited with ${code}`)));
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
const results = [];
try {
  for (let run = 0; run < runs; run += 1) {
    const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
    await page.goto(`http://127.0.0.1:${port}/bench.html`);
    await page.waitForFunction(() => globalThis.__QILIN_BENCH__?.done === true, null, {
      timeout: 120_000,
    });
    results.push(await page.evaluate(() => globalThis.__QILIN_BENCH__));
    await page.close();
  }
} finally {
  await browser.close();
  server.kill();
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const pick = (path) =>
  median(results.map((result) => path.split('.').reduce((value, key) => value[key], result)));
const ms = (value) => `${value.toFixed(2)} ms`;
console.log(`Chromium ${browser.version()}, ${results[0].calls} calls, median of ${runs} runs`);
console.log(`first render (commit):          ${ms(pick('firstRenderMs'))}   target < 1000 ms`);
console.log(`first render (painted):         ${ms(pick('firstPaintMs'))}`);
for (const [name, key] of [
  ['argument delta', 'argumentDelta'],
  ['nested live output', 'nestedProgress'],
]) {
  console.log(
    `${`${name}, per update:`.padEnd(32)}${ms(pick(`${key}.medianMs`))} median, ${ms(pick(`${key}.p95Ms`))} p95` +
      `   (${results[0][key].updates} updates at 100/s; at most ${Math.max(...results.map((r) => r[key].viewsRenderedPerUpdate))} call views rendered and ${Math.max(...results.map((r) => r[key].callsChangedPerUpdate))} call's DOM changed per update)`,
  );
}
console.log('target: per-delta update < 2 ms median');
