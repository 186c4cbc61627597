import { message, type Message } from '@qilin-agent/i18n';
import { hasSpillNotice } from '@qilin-agent/spill-policy/notice';
import type { CallState } from '@qilin-agent/ui-primitives';
import type { LiveGap } from '../slots';
import { Fields, Unsupported, firstLine, flattenContent, type CardInput } from './common';
import { genericModel, type GenericModel } from './generic';
import { endedBadly, plainBody, stateOf, type PlainBody } from './outcome';

/** The states a program in a terminal (or a background job) reports. */
export type ProgramState = 'running' | 'exited' | 'killed';

/** Every [`ProgramState`]. */
export const PROGRAM_STATES: readonly ProgramState[] = ['running', 'exited', 'killed'];

/** What the expanded terminal card shows. */
export type TerminalBody =
  | {
      readonly kind: 'terminal';
      /** The command the terminal runs (`terminal_start`). */
      readonly command?: string;
      /** What was typed, as one line (`terminal_send`); absent for a call that only read. */
      readonly typed?: string;
      /** The program's output since the previous look; live output while running. */
      readonly output: string;
      /** Live output left out after `output`, and the latest output after it. */
      readonly gap?: LiveGap;
      /** True when the call waited for a pattern that did not appear. */
      readonly waitMissed: boolean;
    }
  | PlainBody;

/** The card of a `terminal_start` or `terminal_send` call. */
export interface TerminalModel {
  readonly kind: 'terminal';
  readonly state: CallState;
  /** The terminal's id (from the arguments of `terminal_send`, from the result of a start). */
  readonly terminalId?: string;
  /** The row's summary: the command started, or what was typed; absent while preparing. */
  readonly summary?: Message | string;
  /** The capsule of a program that ended badly (a non-zero exit or a signal). */
  readonly capsule?: Message;
  /** The expanded card; absent while preparing. */
  readonly body?: TerminalBody;
}

/** How a person would read a key: `Enter` as ⏎, the others by name. */
function keyLabel(key: string): string {
  return key === 'Enter' ? '⏎' : key;
}

/** `text` and `keys` as one line: `answer = 6 * 7 ⏎`, `Ctrl-C`. */
export function typedLine(text: string | undefined, keys: readonly string[]): string {
  return [...(text === undefined || text === '' ? [] : [text]), ...keys.map(keyLabel)].join(' ');
}

function checkWait(args: Fields): void {
  args.optionalText('wait_for');
  args.optionalCount('settle_ms');
  args.optionalCount('timeout_secs');
}

/** The arguments of either tool: the command started, or the terminal and what was typed. */
function terminalArguments(
  toolName: string,
  value: unknown,
): { command?: string; terminalId?: string; typed?: string } {
  const args = new Fields(value, 'arguments');
  checkWait(args);
  if (toolName === 'terminal_start') {
    const command = args.text('command');
    if (command.trim() === '') throw new Unsupported('the command is empty');
    return { command };
  }
  const terminalId = args.text('terminal_id');
  if (terminalId.trim() === '') throw new Unsupported('the terminal id is empty');
  const text = args.optionalText('text');
  const keys = (args.optionalList('keys') ?? []).map((key) => {
    if (typeof key !== 'string') throw new Unsupported('arguments.keys holds a non-string');
    return key;
  });
  const typed = typedLine(text, keys);
  return { terminalId, ...(typed === '' ? {} : { typed }) };
}

/** The capsule of a program that ended badly; none while it runs or after a clean exit. */
export function programCapsule(
  state: ProgramState,
  exitCode: number | null,
  signal: string | undefined,
): Message | undefined {
  if (state === 'running') return undefined;
  if (signal !== undefined) return message('shell.signal', { signal });
  if (exitCode === null) return message('shell.noExitCode');
  return exitCode === 0 ? undefined : message('shell.exitCode', { code: exitCode });
}

/**
 * The terminal card of `terminal_start` and `terminal_send` from the raw fields: what was
 * started or typed, then the program's output — live while the call waits, the recorded
 * report once it ended — and a capsule when the program ended badly. As for a shell, an
 * output ending with the spill notice shows as the plain text the model saw, a failed call
 * keeps its arguments and error, and data of another shape falls back to the generic card.
 */
export function terminalModel(input: CardInput): TerminalModel | GenericModel {
  const state = stateOf(input);
  if (input.phase === 'preparing') return { kind: 'terminal', state };
  try {
    const { command, terminalId, typed } = terminalArguments(input.toolName, input.arguments);
    const summary: Message | string =
      typed ?? (command === undefined ? message('terminal.onlyRead') : firstLine(command));
    const base = {
      kind: 'terminal' as const,
      state,
      summary,
      ...(terminalId === undefined ? {} : { terminalId }),
    };
    const shown = {
      ...(command === undefined ? {} : { command }),
      ...(typed === undefined ? {} : { typed }),
    };
    if (input.result === undefined) {
      return {
        ...base,
        body: {
          kind: 'terminal',
          ...shown,
          output: input.progress ?? '',
          ...(input.progressGap === undefined ? {} : { gap: input.progressGap }),
          waitMissed: false,
        },
      };
    }
    if (endedBadly(input)) return { ...base, body: plainBody(input) };
    const report = new Fields(input.result.output, 'output');
    const reportedId = report.text('terminal_id');
    if (terminalId !== undefined && reportedId !== terminalId) {
      throw new Unsupported('the report names another terminal');
    }
    report.text('command');
    report.optionalText('raw');
    const programState = report.oneOf('state', PROGRAM_STATES);
    const capsule = programCapsule(
      programState,
      report.optionalInteger('exit_code'),
      report.optionalText('signal'),
    );
    const output = report.text('output');
    const spilled = hasSpillNotice(output) || hasSpillNotice(flattenContent(input.result.content));
    return {
      ...base,
      terminalId: reportedId,
      ...(capsule === undefined ? {} : { capsule }),
      body: spilled
        ? plainBody(input, { withInput: false })
        : {
            kind: 'terminal',
            ...shown,
            output,
            waitMissed: report.optionalFlag('matched') === false,
          },
    };
  } catch (error) {
    if (error instanceof Unsupported) return genericModel(input);
    throw error;
  }
}

/** One terminal of a `terminal_list` result. */
export interface ListedTerminal {
  readonly terminalId: string;
  readonly command: string;
  readonly state: ProgramState;
  readonly exitCode: number | null;
}

/** One persistent shell of a `terminal_list` result. */
export interface ListedShell {
  /** `bash` or `pwsh`. */
  readonly tool: string;
  /** Its name. */
  readonly name: string;
  readonly running: boolean;
  readonly busy: boolean;
  /** The first line of the last command it ran. */
  readonly lastCommand: string;
  readonly calls: number;
}

/** The card of a `terminal_list` call: two small tables. */
export interface TerminalListModel {
  readonly kind: 'terminalList';
  readonly state: CallState;
  /** The terminals, oldest first; absent until the call ended `ok`. */
  readonly terminals?: readonly ListedTerminal[];
  /** The persistent shells; absent until the call ended `ok`. */
  readonly shells?: readonly ListedShell[];
}

/**
 * The `terminal_list` card from the raw fields: the session's terminals (id, command, state)
 * and persistent shells (name, state, calls, last command) as tables. A failed call or a
 * listing of another shape falls back to the generic card.
 */
export function terminalListModel(input: CardInput): TerminalListModel | GenericModel {
  const state = stateOf(input);
  if (input.result === undefined) return { kind: 'terminalList', state };
  if (endedBadly(input)) return genericModel(input);
  try {
    const listing = new Fields(input.result.output, 'output');
    const terminals = listing.list('terminals').map((entry, index) => {
      const terminal = new Fields(entry, `output.terminals[${index}]`);
      return {
        terminalId: terminal.text('terminal_id'),
        command: terminal.text('command'),
        state: terminal.oneOf('state', PROGRAM_STATES),
        exitCode: terminal.optionalInteger('exit_code'),
      };
    });
    const shells = listing.list('shells').map((entry, index) => {
      const shell = new Fields(entry, `output.shells[${index}]`);
      return {
        tool: shell.text('tool'),
        name: shell.text('shell'),
        running: shell.flag('running'),
        busy: shell.flag('busy'),
        lastCommand: firstLine(shell.text('last_command')),
        calls: shell.count('calls'),
      };
    });
    return { kind: 'terminalList', state, terminals, shells };
  } catch (error) {
    if (error instanceof Unsupported) return genericModel(input);
    throw error;
  }
}
