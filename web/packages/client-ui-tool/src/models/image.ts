import { message } from '@qilin-agent/i18n';
import type { CallState, GalleryImage } from '@qilin-agent/ui-primitives';
import { shortenPath } from '../paths';
import { Fields, Unsupported, type CardInput } from './common';
import { genericModel, type GenericModel } from './generic';
import { endedBadly, plainBody, stateOf, type PlainBody } from './outcome';
import type { Message } from '@qilin-agent/i18n';

/** An image a card shows, its words as messages the view translates. */
export type CardImage = Omit<GalleryImage, 'description' | 'note'> & {
  description: Message;
  note?: Message;
};

/** The card of a `read_image` call. */
export interface ImageModel {
  readonly kind: 'image';
  readonly state: CallState;
  /** The path as given. */
  readonly path?: string;
  /** The path as the row shows it. */
  readonly summary?: string;
  /** The images of the result, for the `tool.call.images` slot. */
  readonly images?: readonly CardImage[];
  /** A failed call's plain input and output. */
  readonly body?: PlainBody;
}

const MEDIA_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'] as const;

/**
 * The image card: the gallery of the image read, with its size and whether the model got it
 * scaled down. The image is the workspace file, loaded through the session's loader (the
 * server's image route), at the file's own size; the copy recorded with the call (what the
 * model saw) is the fallback when the file cannot be loaded any more.
 */
export function imageModel(input: CardInput): ImageModel | GenericModel {
  const state = stateOf(input);
  if (input.phase === 'preparing') return { kind: 'image', state };
  try {
    const path = new Fields(input.arguments, 'arguments').text('path');
    const summary = shortenPath(path, input.cwd, input.home);
    const base = { kind: 'image' as const, state, path, summary };
    if (input.result === undefined) return base;
    if (endedBadly(input)) return { ...base, body: plainBody(input) };
    const output = new Fields(input.result.output, 'output');
    const mediaType = output.oneOf('media_type', MEDIA_TYPES);
    const data = output.text('data');
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(data)) throw new Unsupported('the image data is not base64');
    const width = output.count('width');
    const height = output.count('height');
    const originalWidth = output.count('original_width');
    const originalHeight = output.count('original_height');
    const downscaled = output.flag('downscaled');
    const recorded = { kind: 'inline' as const, mediaType, data };
    const file = output.optionalText('path');
    if (file === undefined || originalWidth === 0 || originalHeight === 0) {
      // No file to load (or no size for it): the recorded copy, at the size the model saw.
      return {
        ...base,
        images: [
          {
            source: recorded,
            width,
            height,
            description: message('images.description', { path: summary, width, height }),
          },
        ],
      };
    }
    return {
      ...base,
      images: [
        {
          source: { kind: 'file', path: file },
          fallback: recorded,
          width: originalWidth,
          height: originalHeight,
          description: message('images.description', {
            path: summary,
            width: originalWidth,
            height: originalHeight,
          }),
          ...(downscaled ? { note: message('images.downscaled', { width, height }) } : {}),
        },
      ],
    };
  } catch (error) {
    if (error instanceof Unsupported) return genericModel(input);
    throw error;
  }
}
