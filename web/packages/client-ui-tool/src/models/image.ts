import { message } from '@qilin-agent/i18n';
import type { CallState, GalleryImage } from '@qilin-agent/ui-primitives';
import { shortenPath } from '../paths';
import { Fields, Unsupported, type CardInput } from './common';
import { genericModel, type GenericModel } from './generic';
import { endedBadly, plainBody, stateOf, type PlainBody } from './outcome';
import type { Message } from '@qilin-agent/i18n';

/** The card of a `read_image` call. */
export interface ImageModel {
  readonly kind: 'image';
  readonly state: CallState;
  /** The path as given. */
  readonly path?: string;
  /** The path as the row shows it. */
  readonly summary?: string;
  /** The images of the result, for the `tool.call.images` slot. */
  readonly images?: readonly (Omit<GalleryImage, 'description' | 'note'> & {
    description: Message;
    note?: Message;
  })[];
  /** A failed call's plain input and output. */
  readonly body?: PlainBody;
}

const MEDIA_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'] as const;

/**
 * The image card: the gallery of the image read (its bytes from the recorded output, loaded
 * through the session's loader), with its size and whether it was scaled down.
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
    return {
      ...base,
      images: [
        {
          source: { kind: 'inline', mediaType, data },
          width,
          height,
          description: message('images.description', { path: summary, width, height }),
          ...(downscaled
            ? {
                note: message('images.downscaled', {
                  width: originalWidth,
                  height: originalHeight,
                }),
              }
            : {}),
        },
      ],
    };
  } catch (error) {
    if (error instanceof Unsupported) return genericModel(input);
    throw error;
  }
}
