import { message, type Message } from '@qilin-agent/i18n';
import { hasSpillNotice } from '@qilin-agent/spill-policy/notice';
import type { CallState } from '@qilin-agent/ui-primitives';
import { Fields, Unsupported, flattenContent, type CardInput } from './common';
import { genericModel, type GenericModel } from './generic';
import { endedBadly, plainBody, stateOf, type PlainBody } from './outcome';
import { PROGRAM_STATES, programCapsule, type ProgramState } from './terminal';

/** The id a job or terminal tool's arguments name, checked. */
function targetId(value: unknown, field: 'job_id' | 'terminal_id'): string {
  const args = new Fields(value, 'arguments');
  const id = args.text(field);
  if (id.trim() === '') throw new Unsupported(`arguments.${field} is empty`);
  args.optionalCount('wait_secs');
  return id;
}

/** The card of a `job_output` call: the output a background job wrote since the last look. */
export interface JobOutputModel {
  readonly kind: 'jobOutput';
  /**
   * The call's state while it is in flight or when it failed; `receipt` once it read the job:
   * the row then names no state of its own, only the job's.
   */
  readonly state: CallState;
  /** The job's id; absent while preparing. */
  readonly jobId?: string;
  /** Where the job stands, as the report says (still running, exited, killed). */
  readonly jobState?: Message;
  /** The static colour of where the job stands, for its dot in the details. */
  readonly jobDot?: CallState;
  /** The capsule of a job that ended badly (a non-zero exit or a signal). */
  readonly capsule?: Message;
  /** The expanded card; absent until the call ended. */
  readonly body?:
    { readonly kind: 'job'; readonly command: string; readonly output: string } | PlainBody;
}

/** Where a job stands, in words. */
function jobStateMessage(state: ProgramState, exitCode: number | null, signal?: string): Message {
  if (state === 'running') return message('job.running');
  if (exitCode !== null) return message('job.exited', { code: exitCode });
  if (signal !== undefined) return message('job.killed', { signal });
  return message('job.ended');
}

/**
 * The colour of where a job stands: running, a clean exit, stopped by a signal, or any other
 * end (a non-zero exit, no exit code at all).
 */
function jobDotOf(state: ProgramState, exitCode: number | null, signal?: string): CallState {
  if (state === 'running') return 'running';
  if (exitCode === 0) return 'ok';
  if (exitCode === null && signal !== undefined) return 'interrupted';
  return 'error';
}

/**
 * The `job_output` card from the raw fields: the job's command and the output it wrote since
 * the previous look, shown as the job's own output (the card that started the job stays a
 * receipt), with where the job stands and a capsule when it ended badly. The call itself is a
 * look at the job, so once it read the report its row shows no state dot of its own (a "done"
 * beside "still running" would read as the job's). An output ending with the spill notice
 * shows as the plain text the model saw; a failed call or a report of another shape falls back
 * to the generic card.
 */
export function jobOutputModel(input: CardInput): JobOutputModel | GenericModel {
  const state = stateOf(input);
  if (input.phase === 'preparing') return { kind: 'jobOutput', state };
  try {
    const jobId = targetId(input.arguments, 'job_id');
    if (input.result === undefined) return { kind: 'jobOutput', state, jobId };
    if (endedBadly(input)) return genericModel(input);
    const report = new Fields(input.result.output, 'output');
    if (report.text('job_id') !== jobId) throw new Unsupported('the report names another job');
    const jobState = report.oneOf('state', PROGRAM_STATES);
    const exitCode = report.optionalInteger('exit_code');
    const signal = report.optionalText('signal');
    const output = report.text('new_output');
    const capsule = programCapsule(jobState, exitCode, signal);
    const spilled = hasSpillNotice(output) || hasSpillNotice(flattenContent(input.result.content));
    return {
      kind: 'jobOutput',
      state: 'receipt',
      jobId,
      jobState: jobStateMessage(jobState, exitCode, signal),
      jobDot: jobDotOf(jobState, exitCode, signal),
      ...(capsule === undefined ? {} : { capsule }),
      body: spilled
        ? plainBody(input, { withInput: false })
        : { kind: 'job', command: report.text('command'), output },
    };
  } catch (error) {
    if (error instanceof Unsupported) return genericModel(input);
    throw error;
  }
}

/** The card of a `job_kill` or `terminal_kill` call: the receipt of an interrupt request. */
export interface InterruptModel {
  readonly kind: 'interrupt';
  /** `receipt` once the request was made: the row shows no execution state. */
  readonly state: CallState;
  /** What was interrupted: the job's or the terminal's id; absent while preparing. */
  readonly target?: string;
  /** The one line the card expands to, once the request was made. */
  readonly confirmation?: Message;
}

/**
 * The interrupt receipt of `job_kill` and `terminal_kill` from the raw fields. It confirms
 * that an interrupt was requested for the job or terminal, nothing more: how the program
 * ended and its last output stay in the recorded result (Inspect shows them), since the card
 * is not where a job's life is followed. A failed call (an unknown id) or data of another
 * shape falls back to the generic card.
 */
export function interruptModel(input: CardInput): InterruptModel | GenericModel {
  const state = stateOf(input);
  if (input.phase === 'preparing') return { kind: 'interrupt', state };
  const field = input.toolName === 'terminal_kill' ? 'terminal_id' : 'job_id';
  try {
    const target = targetId(input.arguments, field);
    if (input.result === undefined) return { kind: 'interrupt', state, target };
    if (endedBadly(input)) return genericModel(input);
    const report = new Fields(input.result.output, 'output');
    if (report.text(field) !== target) throw new Unsupported(`the report names another ${field}`);
    return {
      kind: 'interrupt',
      state: 'receipt',
      target,
      confirmation: message('interrupt.requested', { target }),
    };
  } catch (error) {
    if (error instanceof Unsupported) return genericModel(input);
    throw error;
  }
}
