import { message, type Message } from '@qilin-agent/i18n';
import { hasSpillNotice } from '@qilin-agent/spill-policy/notice';
import type { CallState } from '@qilin-agent/ui-primitives';
import type { LiveGap } from '../slots';
import { Fields, Unsupported, firstLine, flattenContent, type CardInput } from './common';
import { genericModel, type GenericModel } from './generic';
import { endedBadly, plainBody, stateOf, type PlainBody } from './outcome';

/** What the expanded shell card shows. */
export type ShellBody =
  | {
      readonly kind: 'terminal';
      readonly command: string;
      /** The output so far; absent for a command that waits for approval and has not run. */
      readonly output?: string;
      /** Live output left out after `output`, and the latest output after it. */
      readonly gap?: LiveGap;
    }
  | { readonly kind: 'receipt'; readonly command: string; readonly cwd: string }
  | PlainBody;

/** The card of a `bash` (or `pwsh`) call. */
export interface ShellModel {
  readonly kind: 'shell';
  readonly state: CallState;
  /** The command's first line, for the row; absent while preparing. */
  readonly summary?: string;
  /** True for a command started as a background job. */
  readonly background: boolean;
  /** The persistent shell the command runs in, for a persistent call. */
  readonly persistentShell?: string;
  /** The capsule of a finished foreground command that ended badly. */
  readonly capsule?: Message;
  /** The expanded card; absent while preparing. */
  readonly body?: ShellBody;
}

interface CommandArguments {
  command: string;
  background: boolean;
  /** The persistent shell's name, when the call runs in one. */
  persistentShell?: string;
}

/** The shell a call without `shell` runs in when it asks for a persistent one. */
const DEFAULT_SHELL = 'default';

function commandArguments(value: unknown): CommandArguments {
  const args = new Fields(value, 'arguments');
  const command = args.text('command');
  if (command.trim() === '') throw new Unsupported('the command is empty');
  args.optionalCount('timeout_secs');
  const background = args.optionalFlag('background') ?? false;
  const named = args.optionalText('shell');
  const persistent =
    (args.optionalFlag('persistent') ?? false) ||
    named !== undefined ||
    (args.optionalFlag('reset') ?? false);
  if (background && persistent) {
    throw new Unsupported('a background command cannot run in a persistent shell');
  }
  return {
    command,
    background,
    ...(persistent ? { persistentShell: named ?? DEFAULT_SHELL } : {}),
  };
}

/** The capsule of a foreground command: a non-zero exit, a signal, a timeout or no exit code. */
function capsuleOf(
  exitCode: number | null,
  signal: string | undefined,
  timedOut: boolean,
): Message | undefined {
  if (timedOut) return message('shell.timedOut');
  if (signal !== undefined) return message('shell.signal', { signal });
  if (exitCode === null) return message('shell.noExitCode');
  return exitCode === 0 ? undefined : message('shell.exitCode', { code: exitCode });
}

/**
 * The shell card from the raw fields. A running foreground command shows its live output in
 * a terminal; a finished one its output, and a capsule when it ended badly. An output ending
 * with the spill notice shows as the plain text the model saw (expandable): a cut output
 * proves nothing about where its exit line went. A background start shows a static receipt
 * (command and folder, no state: the job's life is `job_output`'s) and never the job's later
 * output or exit. A command in a persistent shell uses the terminal only while it runs; once
 * ended it is the generic card, since a reset shell or a cut output does not describe one
 * process's exit. Arguments or an output of another shape fall back to the generic card.
 */
export function shellModel(input: CardInput): ShellModel | GenericModel {
  const state = stateOf(input);
  if (input.phase === 'preparing') return { kind: 'shell', state, background: false };
  try {
    const { command, background, persistentShell } = commandArguments(input.arguments);
    const base = {
      kind: 'shell' as const,
      state,
      summary: firstLine(command),
      background,
      ...(persistentShell === undefined ? {} : { persistentShell }),
    };
    if (input.result === undefined) {
      const notRun = input.pending !== undefined && !input.progress;
      const gap = notRun ? undefined : input.progressGap;
      return {
        ...base,
        body: {
          kind: 'terminal',
          command,
          ...(notRun ? {} : { output: input.progress ?? '' }),
          ...(gap === undefined ? {} : { gap }),
        },
      };
    }
    // An ended call in a persistent shell says nothing about one process's exit.
    if (persistentShell !== undefined) return genericModel(input);
    if (endedBadly(input)) return { ...base, body: plainBody(input) };
    const output = new Fields(input.result.output, 'output');
    const kind = output.oneOf('kind', ['finished', 'started', 'persistent'] as const);
    if (kind === 'persistent') return genericModel(input);
    if (kind === 'started') {
      if (!background) throw new Unsupported('a foreground command reported a background start');
      return {
        ...base,
        state: 'receipt',
        body: { kind: 'receipt', command: output.text('command'), cwd: output.text('cwd') },
      };
    }
    if (background) throw new Unsupported('a background command reported a finished run');
    const text = output.text('output');
    const exitCode = output.optionalInteger('exit_code');
    const signal = output.optionalText('signal');
    const timedOut = output.flag('timed_out');
    const capsule = capsuleOf(exitCode, signal, timedOut);
    const spilled = hasSpillNotice(text) || hasSpillNotice(flattenContent(input.result.content));
    return {
      ...base,
      ...(capsule === undefined ? {} : { capsule }),
      body: spilled
        ? plainBody(input, { withInput: false })
        : { kind: 'terminal', command, output: text },
    };
  } catch (error) {
    if (error instanceof Unsupported) return genericModel(input);
    throw error;
  }
}
