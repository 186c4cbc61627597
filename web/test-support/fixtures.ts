// Test helpers: the recorded logs in web/fixtures, read from disk.
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  readEventLog,
  type CompactionNode,
  type Event,
  type Snapshot,
  type TurnNode,
} from '@qilin-agent/protocol';

/** The folder of the fixtures (a path: jsdom's `URL` is not one Node's `fs` takes). */
export const fixturesDir = resolve(dirname(fileURLToPath(import.meta.url)), '../fixtures');

/** The names (without `.jsonl`) of the logs recorded from the runtime. */
export function recordedFixtures(): string[] {
  return readdirSync(fixturesDir)
    .filter((name) => name.endsWith('.jsonl'))
    .map((name) => name.replace(/\.jsonl$/, ''))
    .sort();
}

/** The names (`malformed/…`, without `.jsonl`) of the hand-written malformed logs. */
export function malformedFixtures(): string[] {
  return readdirSync(join(fixturesDir, 'malformed'))
    .filter((name) => name.endsWith('.jsonl'))
    .map((name) => `malformed/${name.replace(/\.jsonl$/, '')}`)
    .sort();
}

/** A fixture file's text, by its path under web/fixtures. */
export function fixtureText(path: string): string {
  return readFileSync(join(fixturesDir, path), 'utf8');
}

/** The events of a recorded or malformed log. */
export function fixtureEvents(name: string): Event[] {
  return readEventLog(fixtureText(`${name}.jsonl`)).events;
}

/** A file of the repository (outside web/), by its path from the repository root. */
export function repositoryFile(path: string): string {
  return readFileSync(resolve(fixturesDir, '../..', path), 'utf8');
}

/**
 * A log cut at the first request a `toolName` call opened: the events up to and with its
 * `request.opened`, that event, and the event after it (its resolution, in the recorded logs).
 */
export function untilRequest(fixture: string, toolName: string) {
  const events = fixtureEvents(fixture);
  const at = events.findIndex(
    (event) => event.type === 'request.opened' && event.toolName === toolName,
  );
  const opened = events[at];
  if (opened?.type !== 'request.opened') throw new Error(`${fixture} has no ${toolName} request`);
  return { events: events.slice(0, at + 1), opened, next: events[at + 1] as Event };
}

/** The runtime's recorded tree of a whole log (`NAME.tree.json`). */
interface RecordedTree {
  readonly turns: TurnNode[];
  readonly compactions?: CompactionNode[];
  readonly preparingArguments: Record<string, string>;
}

/**
 * The server's snapshot of a recorded log as of its end: the runtime's recorded tree, its turns
 * from `from` on (the server's `SessionSnapshot`).
 */
export function recordedSnapshot(name: string, from: number): Snapshot {
  const tree = JSON.parse(fixtureText(`${name}.tree.json`)) as RecordedTree;
  const last = tree.turns[tree.turns.length - 1];
  return {
    headSeq: fixtureText(`${name}.jsonl`)
      .split('\n')
      .filter((line) => line.trim() !== '').length,
    totalTurns: tree.turns.length,
    firstTurn: from,
    turns: tree.turns.slice(from),
    compactions: tree.compactions ?? [],
    preparingArguments: tree.preparingArguments,
    activeTurn: last !== undefined && last.finished === undefined ? last.turnId : null,
  };
}

/** Turns of the client's fold as the server sends them: JSON, nothing shared with the fold. */
export function runtimeTurns(turns: readonly TurnNode[]): TurnNode[] {
  return JSON.parse(JSON.stringify(turns)) as TurnNode[];
}
