import { message, type Message } from '@qilin-agent/i18n';
import type { CallState } from '@qilin-agent/ui-primitives';
import {
  callState,
  liveOutput,
  flattenArguments,
  flattenContent,
  summariseArguments,
  type CardInput,
} from './common';
import type { ContentBlock } from '@qilin-agent/protocol';
import type { CardImage } from './image';
import type { LiveGap } from '../slots';

/** The generic card: "Tool call · name", a summary, and the flattened input and output. */
export interface GenericModel {
  readonly kind: 'generic';
  /** The call's state. */
  readonly state: CallState;
  /** The tool's wire name, shown after "Tool call ·". */
  readonly toolName: string;
  /** One line about the call, from its arguments. */
  readonly summary: string;
  /** The arguments as recorded, flattened; absent while preparing. */
  readonly input?: string;
  /** Live output so far, while running. */
  readonly progress?: string;
  /** Live output left out after `progress`, and the latest output after it. */
  readonly progressGap?: LiveGap;
  /** What the model saw, flattened, once ended. */
  readonly output?: string;
  /** A note in place of the output (such as "interrupted"). */
  readonly note?: Message;
  /** The images of the result (image blocks), shown from their recorded bytes. */
  readonly images?: readonly CardImage[];
}

/** The image blocks of a result, as gallery images (their size is not recorded). */
function contentImages(content: readonly ContentBlock[]): CardImage[] {
  const blocks = content.filter((block) => block.type === 'image');
  return blocks.map((block, index) => ({
    source: { kind: 'inline', mediaType: block.mediaType, data: block.data },
    width: 0,
    height: 0,
    description: message('images.block', {
      n: index + 1,
      count: blocks.length,
      type: block.mediaType,
    }),
  }));
}

/**
 * The generic card of a call, from the raw fields alone: the tool's name, a summary of its
 * arguments, the flattened arguments and result. Never the text the tool's server-side
 * display methods wrote: a card derives from what the call did, not from how the server
 * would describe it.
 */
export function genericModel(input: CardInput): GenericModel {
  const state = callState(input);
  if (input.phase === 'preparing') {
    return { kind: 'generic', state, toolName: input.toolName, summary: '' };
  }
  const flattened = flattenArguments(input.arguments);
  const output = input.result === undefined ? undefined : flattenContent(input.result.content);
  const images = input.result === undefined ? [] : contentImages(input.result.content);
  return {
    kind: 'generic',
    state,
    toolName: input.toolName,
    summary: summariseArguments(input.arguments),
    ...(flattened === undefined ? {} : { input: flattened }),
    ...liveOutput(input),
    ...(output === undefined ? {} : { output }),
    ...(state === 'interrupted' ? { note: message('status.interrupted') } : {}),
    ...(images.length === 0 ? {} : { images }),
  };
}
