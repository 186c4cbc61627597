import { useT } from '@qilin-agent/i18n';
import { FileExcerpt } from '@qilin-agent/ui-primitives';
import { readModel, type ReadModel } from '../models/read';
import type { ToolCallOwnerProps } from '../slots';
import { PlainDetails, ToolRow } from './card';
import { Generic, hostOf, useModel } from './shared';

/** The file excerpt card of a `read` call (and of an editor `view`). */
export function ReadCard(props: { view: ToolCallOwnerProps; model: ReadModel }) {
  const t = useT();
  const { model, view } = props;
  const { body } = model;
  return (
    <ToolRow
      callId={view.callId}
      host={hostOf(view)}
      state={model.state}
      icon="file"
      title={t(model.title)}
      summary={model.summary}
      suffix={
        model.suffix === undefined ? undefined : (
          <span className="qp-caption">{t(model.suffix)}</span>
        )
      }
      openPath={model.path}
      openLines={
        body?.kind === 'excerpt' && body.lines.length > 0
          ? { first: body.firstLine, last: body.firstLine + body.lines.length - 1 }
          : undefined
      }
    >
      {body?.kind === 'excerpt' && (
        <FileExcerpt
          path={model.summary ?? ''}
          lines={body.lines}
          firstLine={body.firstLine}
          {...(body.caption === undefined && body.cutLines === undefined
            ? {}
            : {
                caption: [body.caption, body.cutLines]
                  .filter((m) => m !== undefined)
                  .map((m) => t(m))
                  .join(' · '),
              })}
        />
      )}
      {body?.kind === 'empty' && <p className="qp-caption">{t('excerpt.empty')}</p>}
      {body?.kind === 'plain' && <PlainDetails body={body} label={t(model.title)} />}
    </ToolRow>
  );
}

/** `read`: the file excerpt card. */
export function ReadView(props: ToolCallOwnerProps) {
  const model = useModel(props, readModel);
  return model.kind === 'generic' ? (
    <Generic view={props} model={model} />
  ) : (
    <ReadCard view={props} model={model} />
  );
}
