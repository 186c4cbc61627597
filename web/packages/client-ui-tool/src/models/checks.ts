// The `checks_run` card from the raw fields of its call: the ids it asked for, and the check runs
// the runtime recorded as its output.
import type { CallState } from '@qilin-agent/ui-primitives';
import { Fields, Unsupported, type CardInput } from './common';
import { genericModel, type GenericModel } from './generic';
import type { AnnotationLevel, CheckConclusion, CheckStatus } from '@qilin-agent/protocol';
import { endedBadly, plainBody, stateOf, type PlainBody } from './outcome';

/** Every check status, for reading a run. */
export const CHECK_STATUSES: readonly CheckStatus[] = ['completed', 'timed_out', 'failed_to_start'];

/** Every check conclusion, for reading a run. */
export const CHECK_CONCLUSIONS: readonly CheckConclusion[] = ['success', 'failure', 'neutral'];

/** Every annotation level, for reading an annotation. */
export const ANNOTATION_LEVELS: readonly AnnotationLevel[] = ['error', 'warning', 'notice'];

/** One annotation as the card shows it: where, how serious, what. */
export interface AnnotationRow {
  /** The path as the check printed it (workspace-relative inside the workspace). */
  readonly path: string;
  /** The line, from 1, when the check named one. */
  readonly line?: number;
  /** The column, from 1, when the check named one. */
  readonly column?: number;
  readonly level: AnnotationLevel;
  /** One line. */
  readonly message: string;
}

/** One check's run as the card shows it. */
export interface CheckRow {
  readonly id: string;
  readonly description?: string;
  readonly command: string;
  readonly status: CheckStatus;
  readonly conclusion: CheckConclusion;
  readonly durationMs: number;
  /** One line: "12 tests passed", "timed out after 60 s". */
  readonly summary: string;
  readonly annotations: readonly AnnotationRow[];
  /** Annotations past the runtime's cap, not recorded. */
  readonly omittedAnnotations: number;
  /** The command's output tail. */
  readonly output: string;
  /** The whole output spilled to a file, when it was cut. */
  readonly spill?: { readonly path: string; readonly totalBytes: number };
  /** True when the result came from the cache (the files it reads did not change). */
  readonly cached: boolean;
  /** When it started (RFC 3339). */
  readonly startedAt: string;
  /** The exit code, when the command exited with one. */
  readonly exitCode?: number;
}

/** A run of checks as the cards show it: each run, the overall conclusion and summary. */
export interface ChecksReceipt {
  readonly runs: readonly CheckRow[];
  readonly conclusion: CheckConclusion;
  /** "3 checks: 2 passed, 1 failed". */
  readonly summary: string;
}

/** The overall conclusion of runs: failure if any failed, else success if any passed, else neutral. */
export function overallConclusion(runs: readonly Pick<CheckRow, 'conclusion'>[]): CheckConclusion {
  if (runs.some((run) => run.conclusion === 'failure')) return 'failure';
  if (runs.some((run) => run.conclusion === 'success')) return 'success';
  return 'neutral';
}

function annotationRow(value: unknown, what: string): AnnotationRow {
  const fields = new Fields(value, what);
  const path = fields.text('path');
  if (path.trim() === '') throw new Unsupported(`${what}.path is empty`);
  const line = fields.optionalCount('line');
  const column = fields.optionalCount('column');
  if (line === 0 || column === 0) throw new Unsupported(`${what}: lines and columns count from 1`);
  return {
    path,
    ...(line === undefined ? {} : { line }),
    ...(column === undefined ? {} : { column }),
    level: fields.oneOf('level', ANNOTATION_LEVELS),
    message: fields.text('message'),
  };
}

/** One recorded check run (`CheckRun`); throws [`Unsupported`] for another shape. */
export function checkRow(value: unknown, what = 'run'): CheckRow {
  const fields = new Fields(value, what);
  const id = fields.text('id');
  if (id.trim() === '') throw new Unsupported(`${what}.id is empty`);
  const status = fields.oneOf('status', CHECK_STATUSES);
  const conclusion = fields.oneOf('conclusion', CHECK_CONCLUSIONS);
  // A timeout or a failed start is never a success: a record saying otherwise is not ours.
  if (status !== 'completed' && conclusion !== 'failure') {
    throw new Unsupported(`${what}: a run that ${status} must conclude failure`);
  }
  const description = fields.optionalText('description');
  const spillValue = fields.raw('spill');
  let spill: CheckRow['spill'];
  if (spillValue !== undefined && spillValue !== null) {
    const spilled = new Fields(spillValue, `${what}.spill`);
    spill = { path: spilled.text('path'), totalBytes: spilled.count('totalBytes') };
  }
  const exitCode = fields.optionalInteger('exitCode');
  return {
    id,
    ...(description === undefined || description.trim() === '' ? {} : { description }),
    command: fields.text('command'),
    status,
    conclusion,
    durationMs: fields.count('durationMs'),
    summary: fields.text('summary'),
    annotations: fields
      .list('annotations')
      .map((item, at) => annotationRow(item, `${what}.annotations[${at}]`)),
    omittedAnnotations: fields.count('omittedAnnotations'),
    output: fields.text('output'),
    ...(spill === undefined ? {} : { spill }),
    cached: fields.flag('cached'),
    startedAt: fields.text('startedAt'),
    ...(exitCode === null ? {} : { exitCode }),
  };
}

/**
 * A recorded `ChecksRunOutput`; throws [`Unsupported`] for another shape, or when its overall
 * conclusion is not the one its runs give.
 */
export function checksReceipt(value: unknown, what = 'checks'): ChecksReceipt {
  const fields = new Fields(value, what);
  const runs = fields.list('runs').map((item, at) => checkRow(item, `${what}.runs[${at}]`));
  const conclusion = fields.oneOf('conclusion', CHECK_CONCLUSIONS);
  if (conclusion !== overallConclusion(runs)) {
    throw new Unsupported(`${what}.conclusion disagrees with its runs`);
  }
  return { runs, conclusion, summary: fields.text('summary') };
}

/** The card of a `checks_run` call. */
export interface ChecksRunModel {
  readonly kind: 'checksRun';
  readonly state: CallState;
  /** The ids the call asked for; absent for every declared check. */
  readonly ids?: readonly string[];
  /** The runs, once the call ended `ok`. */
  readonly receipt?: ChecksReceipt;
  /** A failed call's plain card. */
  readonly body?: PlainBody;
}

/**
 * The `checks_run` card: the ids asked for on the row while it runs; once ended, the overall
 * conclusion and summary on the row, and a receipt of one row per check. A run of a check the
 * call did not ask for, or data of another shape, falls back to the generic card; a failed call
 * shows its plain input and error.
 */
export function checksRunModel(input: CardInput): ChecksRunModel | GenericModel {
  const state = stateOf(input);
  if (input.phase === 'preparing') return { kind: 'checksRun', state };
  try {
    const args = new Fields(input.arguments ?? {}, 'arguments');
    const ids = args.optionalList('ids')?.map((id, at) => {
      if (typeof id !== 'string' || id.trim() === '') {
        throw new Unsupported(`arguments.ids[${at}] is not a check id`);
      }
      return id;
    });
    const base = { kind: 'checksRun' as const, state, ...(ids === undefined ? {} : { ids }) };
    if (input.result === undefined) return base;
    if (endedBadly(input)) return { ...base, body: plainBody(input) };
    const receipt = checksReceipt(input.result.output, 'output');
    if (ids !== undefined) {
      const asked = new Set(ids);
      const other = receipt.runs.find((run) => !asked.has(run.id));
      if (other !== undefined) throw new Unsupported(`output ran ${other.id}, not asked for`);
    }
    return { ...base, receipt };
  } catch (error) {
    if (error instanceof Unsupported) return genericModel(input);
    throw error;
  }
}
