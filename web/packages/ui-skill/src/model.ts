import type { CallState } from '@qilin-agent/ui-primitives';
import {
  Fields,
  Unsupported,
  genericModel,
  plainBody,
  callState,
  type CardInput,
  type GenericModel,
  type PlainBody,
} from '@qilin-agent/client-ui-tool';
import { splitLines } from '@qilin-agent/ui-primitives';

/** The card of a `skill` call: which skill, which of its files, and what was read. */
export interface SkillModel {
  readonly kind: 'skill';
  readonly state: CallState;
  /** The skill's name. */
  readonly name?: string;
  /** The file read, relative to the skill's folder; absent for its instructions. */
  readonly file?: string;
  /** The lines read. */
  readonly lines?: readonly string[];
  /** The skill's other files, listed when its instructions were read. */
  readonly files?: readonly string[];
  /** A failed call's plain card. */
  readonly body?: PlainBody;
}

/** The skill card from the raw fields; anything of another shape is the generic card. */
export function skillModel(input: CardInput): SkillModel | GenericModel {
  const state = callState(input);
  if (input.phase === 'preparing') return { kind: 'skill', state };
  try {
    const args = new Fields(input.arguments, 'arguments');
    const name = args.text('name');
    const file = args.optionalText('file');
    const base = { kind: 'skill' as const, state, name, ...(file === undefined ? {} : { file }) };
    if (input.result === undefined) return base;
    if (input.result.status !== 'ok') return { ...base, body: plainBody(input) };
    const output = new Fields(input.result.output, 'output');
    const files = output.list('files');
    if (!files.every((entry) => typeof entry === 'string')) throw new Unsupported('output.files');
    const read = output.text('file');
    return {
      ...base,
      ...(file === undefined ? {} : { file: read }),
      lines: splitLines(output.text('content')),
      files: files as string[],
    };
  } catch (error) {
    if (error instanceof Unsupported) return genericModel(input);
    throw error;
  }
}
