import { useT } from '@qilin-agent/i18n';
import { useCallback, useEffect, useState } from 'react';

/** Where an image's bytes are: in the event itself, or in a file the host can serve. */
export type ImageSource =
  | { kind: 'inline'; mediaType: string; data: string }
  | { kind: 'file'; path: string; mediaType?: string };

/**
 * Turns an image source into an address an `<img>` can show; the session's loader. It rejects
 * with an error whose message says why the image cannot be shown (the gallery shows it). A
 * `blob:` address it returns is the gallery's: revoked when the image leaves the page.
 */
export type ImageLoader = (source: ImageSource) => Promise<string>;

const SHOWN_TYPES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

/**
 * The loader for images carried in the event (base64): a `data:` address for PNG, JPEG, GIF
 * and WebP; anything else is refused. Images in files need the host's loader.
 */
export const inlineImageLoader: ImageLoader = async (source) => {
  if (source.kind !== 'inline') {
    throw new Error(`the image ${source.path} is in a file; this host cannot load files`);
  }
  if (!SHOWN_TYPES.has(source.mediaType) || !/^[A-Za-z0-9+/]*={0,2}$/.test(source.data)) {
    throw new Error(`an inline ${source.mediaType} image cannot be shown`);
  }
  return `data:${source.mediaType};base64,${source.data}`;
};

/** One image of a gallery. */
export interface GalleryImage {
  /** Where its bytes are. */
  source: ImageSource;
  /** Its text alternative (the file and its size). */
  description: string;
  /** Width in pixels (0 when not known). */
  width: number;
  /** Height in pixels (0 when not known). */
  height: number;
  /** A note under it (such as "scaled down from 4000 × 3000"). */
  note?: string;
  /** Where else the bytes are (the copy recorded with the call), shown when `source` fails. */
  fallback?: ImageSource;
}

type Shown =
  | { kind: 'loading' }
  | { kind: 'shown'; src: string; fallbackBecause?: string }
  | { kind: 'failed'; reason?: string };

const reasonOf = (error: unknown): string | undefined =>
  error instanceof Error && error.message !== '' ? error.message : undefined;

function GalleryItem(props: { image: GalleryImage; loadImage: ImageLoader }) {
  const t = useT();
  const { image, loadImage } = props;
  // The state of the source it was loaded for: a new source shows as loading until it loads.
  const [loaded, setLoaded] = useState<{ for: ImageSource; shown: Shown }>();
  const state: Shown = loaded?.for === image.source ? loaded.shown : { kind: 'loading' };
  const setState = useCallback(
    (shown: Shown) => setLoaded({ for: image.source, shown }),
    [image.source],
  );
  useEffect(() => {
    let live = true;
    const owned: string[] = [];
    const load = async (source: ImageSource) => {
      const src = await loadImage(source);
      if (src.startsWith('blob:')) owned.push(src);
      return src;
    };
    load(image.source).then(
      (src) => live && setState({ kind: 'shown', src }),
      (error: unknown) => {
        const reason = reasonOf(error);
        if (image.fallback === undefined) {
          if (live) setState({ kind: 'failed', ...(reason === undefined ? {} : { reason }) });
          return;
        }
        load(image.fallback).then(
          (src) =>
            live &&
            setState({
              kind: 'shown',
              src,
              ...(reason === undefined ? {} : { fallbackBecause: reason }),
            }),
          () => live && setState({ kind: 'failed', ...(reason === undefined ? {} : { reason }) }),
        );
      },
    );
    return () => {
      live = false;
      owned.forEach((src) => URL.revokeObjectURL(src));
    };
  }, [image.source, image.fallback, loadImage, setState]);
  const ratio =
    image.width > 0 && image.height > 0 ? `${image.width} / ${image.height}` : undefined;
  return (
    <figure className="qp-gallery__item" data-image-state={state.kind}>
      <div
        className="qp-gallery__frame"
        style={ratio === undefined || state.kind === 'failed' ? undefined : { aspectRatio: ratio }}
      >
        {state.kind === 'shown' && (
          <img
            src={state.src}
            alt={image.description}
            {...(ratio === undefined ? {} : { width: image.width, height: image.height })}
            // The address answered but its bytes do not decode: a message, never a broken icon.
            onError={() => setState({ kind: 'failed', reason: t('images.undecodable') })}
          />
        )}
        {state.kind === 'loading' && <span className="qp-caption">{t('images.loading')}</span>}
        {state.kind === 'failed' && (
          <span className="qp-caption qp-gallery__failure" role="status">
            {t('images.failed')}
            {state.reason === undefined ? null : `: ${state.reason}`}
          </span>
        )}
      </div>
      <figcaption className="qp-caption">
        {image.description}
        {image.note !== undefined && ` · ${image.note}`}
        {state.kind === 'shown' && state.fallbackBecause !== undefined && (
          <span className="qp-gallery__fallback" role="status">
            {' · '}
            {t('images.recordedCopy', { reason: state.fallbackBecause })}
          </span>
        )}
      </figcaption>
    </figure>
  );
}

/** Images side by side, each loaded through the session's loader, with its size. */
export function ImageGallery(props: { images: readonly GalleryImage[]; loadImage: ImageLoader }) {
  const t = useT();
  return (
    <div className="qp-gallery" role="group" aria-label={t('images.label')}>
      {props.images.map((image, index) => (
        <GalleryItem key={index} image={image} loadImage={props.loadImage} />
      ))}
    </div>
  );
}
