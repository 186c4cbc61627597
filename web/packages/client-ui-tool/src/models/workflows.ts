// The workflow cards — `workflow_run`, `workflow_status`, `workflow_stop` — from the raw fields of
// each call: its arguments and the workflow runs the runtime recorded as its output.
import type { WorkflowStatus } from '@qilin-agent/protocol';
import type { CallState } from '@qilin-agent/ui-primitives';
import { Fields, Unsupported, type CardInput } from './common';
import { genericModel, type GenericModel } from './generic';
import { endedBadly, plainBody, stateOf, type PlainBody } from './outcome';

/** Where a workflow run stands (the generated `WorkflowStatus`). */
export type WorkflowState = WorkflowStatus;

/** Where a call step stands: the status of the nested call it made. */
export type StepState = 'running' | 'ok' | 'error' | 'denied' | 'interrupted';

/** Every [`WorkflowState`], for reading a record. */
export const WORKFLOW_STATES: readonly WorkflowState[] = [
  'running',
  'completed',
  'failed',
  'stopped',
  'interrupted',
];

/** Every [`StepState`], for reading a record. */
export const STEP_STATES: readonly StepState[] = [
  'running',
  'ok',
  'error',
  'denied',
  'interrupted',
];

/** One step of a run as the card shows it: a nested call, or a section of the report. */
export type StepRow =
  | {
      readonly kind: 'call';
      /** From 0, in the order the script made them. */
      readonly index: number;
      /** The nested call's id (its card nests under the workflow's). */
      readonly callId?: string;
      readonly tool: string;
      readonly status: StepState;
      /** A short label: the agent's description, the tool's name. */
      readonly title: string;
      /** True when its result came from the journal after a restart (it did not run again). */
      readonly replayed: boolean;
      /** RFC 3339. */
      readonly at: string;
    }
  | {
      readonly kind: 'report';
      readonly index: number;
      /** The section's title. */
      readonly title: string;
      /** The section's Markdown. */
      readonly text: string;
      readonly at: string;
    };

/** A workflow run (`WorkflowRun`) as the cards show it. */
export interface WorkflowRow {
  readonly runId: string;
  /** The workflow's file name without `.py`. */
  readonly workflow: string;
  readonly description?: string;
  /** The arguments it was run with. */
  readonly args: unknown;
  readonly status: WorkflowState;
  /** In order of their index, one per index (a call step's later report kept). */
  readonly steps: readonly StepRow[];
  /** The script's final value, when it gave one. */
  readonly result?: unknown;
  readonly error?: string;
  /** RFC 3339. */
  readonly startedAt: string;
  /** RFC 3339, once it ended. */
  readonly endedAt?: string;
  readonly durationMs?: number;
}

function nonBlank(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}

/** One recorded step (`WorkflowStep`); throws [`Unsupported`] for another shape. */
export function stepRow(value: unknown, what = 'step'): StepRow {
  const fields = new Fields(value, what);
  const index = fields.count('index');
  const kind = fields.oneOf('kind', ['call', 'report'] as const);
  const title = fields.text('title');
  const at = fields.text('at');
  if (kind === 'report') {
    return { kind, index, title, text: fields.optionalText('text') ?? '', at };
  }
  const tool = nonBlank(fields.optionalText('tool'));
  if (tool === undefined) throw new Unsupported(`${what}.tool is missing for a call step`);
  const callId = nonBlank(fields.optionalText('callId'));
  return {
    kind,
    index,
    ...(callId === undefined ? {} : { callId }),
    tool,
    status: fields.oneOf('status', STEP_STATES),
    title,
    replayed: fields.optionalFlag('replayed') ?? false,
    at,
  };
}

/** Steps in order of their index, the later report of each index kept. */
function byIndex(steps: readonly StepRow[]): StepRow[] {
  const rows = new Map<number, StepRow>();
  for (const step of steps) {
    const known = rows.get(step.index);
    // A call step is reported when it starts and again when it ends: an ended one stays.
    const keep =
      known !== undefined &&
      known.kind === 'call' &&
      step.kind === 'call' &&
      known.status !== 'running' &&
      step.status === 'running';
    if (!keep) rows.set(step.index, step);
  }
  return [...rows.values()].sort((one, other) => one.index - other.index);
}

/** One recorded run (`WorkflowRun`); throws [`Unsupported`] for another shape. */
export function workflowRow(value: unknown, what = 'run'): WorkflowRow {
  const fields = new Fields(value, what);
  const runId = fields.text('runId');
  if (runId.trim() === '') throw new Unsupported(`${what}.runId is empty`);
  const workflow = fields.text('workflow');
  if (workflow.trim() === '') throw new Unsupported(`${what}.workflow is empty`);
  const description = nonBlank(fields.optionalText('description'));
  const status = fields.oneOf('status', WORKFLOW_STATES);
  const result = fields.raw('result');
  const error = nonBlank(fields.optionalText('error'));
  const endedAt = fields.optionalText('endedAt');
  const durationMs = fields.optionalCount('durationMs');
  if (status === 'running' && endedAt !== undefined) {
    throw new Unsupported(`${what}: a running workflow has no end`);
  }
  return {
    runId,
    workflow,
    ...(description === undefined ? {} : { description }),
    args: fields.raw('args') ?? {},
    status,
    steps: byIndex(
      (fields.optionalList('steps') ?? []).map((item, at) => stepRow(item, `${what}.steps[${at}]`)),
    ),
    ...(result === undefined || result === null ? {} : { result }),
    ...(error === undefined ? {} : { error }),
    startedAt: fields.text('startedAt'),
    ...(endedAt === undefined ? {} : { endedAt }),
    ...(durationMs === undefined ? {} : { durationMs }),
  };
}

/** The static colour of a run's status. */
export function workflowDot(status: WorkflowState): CallState {
  switch (status) {
    case 'running':
      return 'running';
    case 'completed':
      return 'ok';
    case 'failed':
      return 'error';
    case 'stopped':
    case 'interrupted':
      return 'interrupted';
  }
}

/** The static colour of a call step's status: the call states' own. */
export function stepDot(status: StepState): CallState {
  return status;
}

/** The card of a `workflow_run` call. */
export interface WorkflowRunModel {
  readonly kind: 'workflowRun';
  readonly state: CallState;
  /** The workflow asked for (the row's summary); absent while preparing. */
  readonly workflow?: string;
  /** True for a run started in the background (the call returned at once). */
  readonly background?: boolean;
  /** The arguments asked for. */
  readonly args?: unknown;
  /** The run, once the call ended `ok`. */
  readonly run?: WorkflowRow;
  /** A failed call's plain card (an unknown workflow, bad arguments). */
  readonly body?: PlainBody;
}

/**
 * The `workflow_run` card: the workflow's name on the row; once the call ended, the run — its
 * status and duration, its steps in order (the nested calls' cards render under it as code-mode
 * calls do under `run_code`), its report sections, its result or error. A run of another
 * workflow than asked, or data of another shape, falls back to the generic card.
 */
export function workflowRunModel(input: CardInput): WorkflowRunModel | GenericModel {
  const state = stateOf(input);
  if (input.phase === 'preparing') return { kind: 'workflowRun', state };
  try {
    const args = new Fields(input.arguments, 'arguments');
    const workflow = args.text('workflow');
    if (workflow.trim() === '') throw new Unsupported('arguments.workflow is empty');
    const background = args.optionalFlag('background') ?? false;
    const asked = args.raw('args');
    const base = {
      kind: 'workflowRun' as const,
      state,
      workflow,
      background,
      ...(asked === undefined || asked === null ? {} : { args: asked }),
    };
    if (input.result === undefined) return base;
    if (endedBadly(input)) return { ...base, body: plainBody(input) };
    const run = workflowRow(new Fields(input.result.output, 'output').raw('run'), 'output.run');
    if (run.workflow !== workflow.replace(/\.py$/, '')) {
      throw new Unsupported(`output.run is of ${run.workflow}, not ${workflow}`);
    }
    return { ...base, run };
  } catch (error) {
    if (error instanceof Unsupported) return genericModel(input);
    throw error;
  }
}

/** The card of a `workflow_status` call. */
export interface WorkflowStatusModel {
  readonly kind: 'workflowStatus';
  readonly state: CallState;
  /** The run asked about; absent for every run of the session. */
  readonly id?: string;
  /** The runs as the call read them (not as they stand now). */
  readonly runs?: readonly WorkflowRow[];
  readonly body?: PlainBody;
}

/** The `workflow_status` card: the runs as the call read them then. */
export function workflowStatusModel(input: CardInput): WorkflowStatusModel | GenericModel {
  const state = stateOf(input);
  if (input.phase === 'preparing') return { kind: 'workflowStatus', state };
  try {
    const id = nonBlank(new Fields(input.arguments ?? {}, 'arguments').optionalText('id'));
    const base = { kind: 'workflowStatus' as const, state, ...(id === undefined ? {} : { id }) };
    if (input.result === undefined) return base;
    if (endedBadly(input)) return { ...base, body: plainBody(input) };
    const runs = new Fields(input.result.output, 'output')
      .list('runs')
      .map((item, at) => workflowRow(item, `output.runs[${at}]`));
    if (id !== undefined && runs.some((run) => run.runId !== id)) {
      throw new Unsupported(`output holds another run than ${id}`);
    }
    return { ...base, runs };
  } catch (error) {
    if (error instanceof Unsupported) return genericModel(input);
    throw error;
  }
}

/** The card of a `workflow_stop` call. */
export interface WorkflowStopModel {
  readonly kind: 'workflowStop';
  readonly state: CallState;
  /** The run asked to stop. */
  readonly id?: string;
  /** The run as the call left it. */
  readonly run?: WorkflowRow;
  readonly body?: PlainBody;
}

/** The `workflow_stop` card: which run, and the run as the call left it. */
export function workflowStopModel(input: CardInput): WorkflowStopModel | GenericModel {
  const state = stateOf(input);
  if (input.phase === 'preparing') return { kind: 'workflowStop', state };
  try {
    const id = new Fields(input.arguments, 'arguments').text('id');
    if (id.trim() === '') throw new Unsupported('arguments.id is empty');
    const base = { kind: 'workflowStop' as const, state, id };
    if (input.result === undefined) return base;
    if (endedBadly(input)) return { ...base, body: plainBody(input) };
    const run = workflowRow(new Fields(input.result.output, 'output').raw('run'), 'output.run');
    if (run.runId !== id) throw new Unsupported(`output.run is not ${id}`);
    return { ...base, run };
  } catch (error) {
    if (error instanceof Unsupported) return genericModel(input);
    throw error;
  }
}
