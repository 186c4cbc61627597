import { useT } from '@qilin-agent/i18n';
import { useEffect, useState } from 'react';

/** Where an image's bytes are: in the event itself, or in a file the host can serve. */
export type ImageSource =
  | { kind: 'inline'; mediaType: string; data: string }
  | { kind: 'file'; path: string; mediaType?: string };

/** Turns an image source into an address an `<img>` can show; the session's loader. */
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
  /** Width in pixels. */
  width: number;
  /** Height in pixels. */
  height: number;
  /** A note under it (such as "scaled down from 4000 × 3000"). */
  note?: string;
}

function GalleryItem(props: { image: GalleryImage; loadImage: ImageLoader }) {
  const t = useT();
  const { image, loadImage } = props;
  const [state, setState] = useState<
    { kind: 'loading' } | { kind: 'shown'; src: string } | { kind: 'failed' }
  >({
    kind: 'loading',
  });
  useEffect(() => {
    let live = true;
    loadImage(image.source).then(
      (src) => live && setState({ kind: 'shown', src }),
      () => live && setState({ kind: 'failed' }),
    );
    return () => {
      live = false;
    };
  }, [image.source, loadImage]);
  const ratio =
    image.width > 0 && image.height > 0 ? `${image.width} / ${image.height}` : undefined;
  return (
    <figure className="qp-gallery__item">
      <div
        className="qp-gallery__frame"
        style={ratio === undefined ? undefined : { aspectRatio: ratio }}
      >
        {state.kind === 'shown' && (
          <img src={state.src} alt={image.description} width={image.width} height={image.height} />
        )}
        {state.kind === 'loading' && <span className="qp-caption">{t('images.loading')}</span>}
        {state.kind === 'failed' && (
          <span className="qp-caption" role="status">
            {t('images.failed')}
          </span>
        )}
      </div>
      <figcaption className="qp-caption">
        {image.description}
        {image.note !== undefined && ` · ${image.note}`}
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
