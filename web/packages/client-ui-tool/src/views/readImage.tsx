import { useT } from '@qilin-agent/i18n';
import { useSlotView } from '@qilin-agent/slots';
import { ImageGallery } from '@qilin-agent/ui-primitives';
import { imageModel } from '../models/image';
import { IMAGES_SLOT, type ToolCallOwnerProps } from '../slots';
import { PlainDetails, ToolRow } from './card';
import { Generic, hostOf, useModel } from './shared';

/** `read_image`: the image card; its gallery goes through the `tool.call.images` slot. */
export function ReadImageView(props: ToolCallOwnerProps) {
  const t = useT();
  const model = useModel(props, imageModel);
  const Gallery = useSlotView(IMAGES_SLOT, props.toolName) ?? ImageGallery;
  if (model.kind === 'generic') return <Generic view={props} model={model} />;
  const images = model.images?.map(({ description, note, ...image }) => ({
    ...image,
    description: t(description),
    ...(note === undefined ? {} : { note: t(note) }),
  }));
  return (
    <ToolRow
      callId={props.callId}
      host={hostOf(props)}
      state={model.state}
      icon="image"
      title={t('tool.read_image.title')}
      summary={model.summary}
      openPath={model.path}
    >
      {/* eslint-disable-next-line react-hooks/static-components -- the gallery is the images slot's registration */}
      {images !== undefined && <Gallery images={images} loadImage={props.loadImage} />}
      {model.body !== undefined && (
        <PlainDetails body={model.body} label={t('tool.read_image.title')} />
      )}
    </ToolRow>
  );
}
