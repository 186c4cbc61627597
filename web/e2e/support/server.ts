// Starts a real `qilin serve` for a test: a temp workspace, an agent and a scripted model.
import { expect } from '@playwright/test';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

/** A running server: where to open it, and how to stop it. */
export interface QilinServer {
  /** The page's URL with the token in its fragment, as `qilin serve` printed it. */
  readonly url: string;
  /** The server's origin (`http://127.0.0.1:PORT`). */
  readonly origin: string;
  /** The access token (from the URL's fragment), for requests made outside the page. */
  readonly token: string;
  /** The temp workspace. */
  readonly workspace: string;
  /** Stops the server the way Ctrl-C does, and starts it again on the same port and store. */
  restart(): Promise<void>;
  /** Stops the server and removes the workspace. */
  stop(): Promise<void>;
}

/** The `qilin` binary the test runs: `QILIN_BIN`, else the workspace's debug build. */
export function qilinBinary(): string {
  const binary =
    process.env.QILIN_BIN ?? resolve(import.meta.dirname, '../../../target/debug/qilin');
  if (!existsSync(binary)) {
    throw new Error(
      `no qilin binary at ${binary}: build it with \`npm --prefix web run build:app && cargo build -p qilin-cli\` (or set QILIN_BIN)`,
    );
  }
  return binary;
}

interface Running {
  child: ChildProcess;
  url: string;
}

/** Variables set for the server beside the test's own environment (`HOME`, for one). */
export type ServerEnv = Readonly<Record<string, string>>;

/** Runs `qilin serve` with `args` and `env`, and waits for the URL it prints. */
async function launch(
  workspace: string,
  args: readonly string[],
  env: ServerEnv,
): Promise<Running> {
  const child: ChildProcess = spawn(
    qilinBinary(),
    ['serve', '--workspace', workspace, '--no-sandbox', ...args],
    {
      cwd: workspace,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, ...env, NO_COLOR: '1' },
    },
  );
  return { child, url: await printedUrl(child, 'qilin serve') };
}

/** Waits for the URL with its token that a server started as `child` prints (30 s at most). */
function printedUrl(child: ChildProcess, name: string): Promise<string> {
  let output = '';
  return new Promise<string>((resolveUrl, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${name} printed no URL in 30 s:\n${output}`)),
      30_000,
    );
    const hear = (chunk: Buffer) => {
      output += chunk.toString();
      const found = /(http:\/\/127\.0\.0\.1:\d+\/\S*#token=\S+)/.exec(output);
      if (found?.[1] !== undefined) {
        clearTimeout(timer);
        resolveUrl(found[1]);
      }
    };
    child.stdout?.on('data', hear);
    child.stderr?.on('data', hear);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited (${code}):\n${output}`));
    });
  });
}

/** Stops a server as Ctrl-C does (it stores its running turns' ends), killing it after 10 s. */
async function halt(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((done) => child.once('exit', done));
  child.kill('SIGINT');
  const timeout = setTimeout(() => child.kill('SIGKILL'), 10_000);
  await exited;
  clearTimeout(timeout);
}

/** Starts `qilin serve` on a workspace holding `files` (text or bytes), with `args` and `env`. */
async function startServer(
  files: Record<string, string | Uint8Array>,
  args: readonly string[],
  env: ServerEnv,
): Promise<QilinServer> {
  const workspace = mkdtempSync(join(tmpdir(), 'qilin-e2e-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(workspace, name), text);
  let running = await launch(workspace, args, env);
  const url = running.url;
  const origin = new URL(url).origin;
  const token = new URLSearchParams(new URL(url).hash.slice(1)).get('token') ?? '';
  return {
    url,
    origin,
    token,
    workspace,
    restart: async () => {
      await halt(running.child);
      running = await launch(
        workspace,
        [...args, '--bind', new URL(url).host, '--token', token],
        env,
      );
    },
    stop: async () => {
      await halt(running.child);
      rmSync(workspace, { recursive: true, force: true });
    },
  };
}

/**
 * Starts `qilin serve` running `agent` on the scripted model's `script` (as `e2e.agent` and
 * `script.yaml` in the workspace, beside any other `files`), with `env` set for the server.
 */
export function startScriptedServer(
  agent: string,
  script: string,
  files: Record<string, string | Uint8Array> = {},
  env: ServerEnv = {},
): Promise<QilinServer> {
  return startServer(
    { 'e2e.agent': agent, 'script.yaml': script, ...files },
    ['--agent', 'e2e.agent', '--model', 'scripted:script.yaml'],
    env,
  );
}

/** The example application's binary: `INVOICES_BIN`, else the workspace's debug build. */
function invoicesBinary(): string {
  const binary =
    process.env.INVOICES_BIN ?? resolve(import.meta.dirname, '../../../target/debug/invoices');
  if (!existsSync(binary)) {
    throw new Error(
      `no invoices binary at ${binary}: build it with \`npm --prefix web run build:app && cargo build -p invoices\` (or set INVOICES_BIN)`,
    );
  }
  return binary;
}

/** An application's server: where to open it, and how to stop it. */
export interface AppServer {
  /** The page's URL with the token in its fragment, as the application printed it. */
  readonly url: string;
  /** Stops the server. */
  stop(): Promise<void>;
}

/**
 * Starts `invoices serve`: the example application's sessions, with its own tools, served by
 * Qilin's server (its workspace, agent and scripted model are the application's own).
 */
export async function startInvoicesServer(): Promise<AppServer> {
  const child: ChildProcess = spawn(invoicesBinary(), ['serve'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NO_COLOR: '1' },
  });
  const url = await printedUrl(child, 'invoices serve');
  return { url, stop: () => halt(child) };
}

/**
 * Calls `server`'s API itself (not through the page) with its token: `method` on `path`, with
 * `body` as JSON if given. Expects a success and returns the answer's JSON.
 */
export async function callServer<T>(
  server: QilinServer | undefined,
  method: string,
  path: string,
  body?: unknown,
): Promise<T> {
  if (server === undefined) throw new Error('the server did not start');
  const answered = await fetch(`${server.origin}${path}`, {
    method,
    headers: {
      Authorization: `Bearer ${server.token}`,
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await answered.text();
  expect(answered.ok, `${method} ${path}: HTTP ${answered.status} ${text}`).toBe(true);
  return JSON.parse(text) as T;
}

/**
 * Sends `prompt` as a turn of session `sessionId` through the API, and waits until it ended:
 * the session then holds `total` turns and none runs.
 */
export async function recordTurn(
  server: QilinServer,
  sessionId: string,
  turn: { prompt: string; clientTurnId: string },
  total: number,
): Promise<void> {
  await callServer(server, 'POST', `/api/sessions/${sessionId}/turns`, turn);
  await expect
    .poll(async () => {
      const { totalTurns, activeTurn } = await callServer<{
        totalTurns: number;
        activeTurn?: string | null;
      }>(server, 'GET', `/api/sessions/${sessionId}/snapshot?turns=1`);
      return totalTurns === total && (activeTurn ?? null) === null;
    })
    .toBe(true);
}
