import { useT } from '@qilin-agent/i18n';
import { WebPageSummary } from '@qilin-agent/ui-primitives';
import { webModel } from '../models/web';
import type { ToolCallOwnerProps } from '../slots';
import { PlainDetails, ToolRow } from './card';
import { Generic, hostOf, useModel } from './shared';

/** `web_fetch`: the web page card. */
export function WebFetchView(props: ToolCallOwnerProps) {
  const t = useT();
  const model = useModel(props, webModel);
  if (model.kind === 'generic') return <Generic view={props} model={model} />;
  const { body } = model;
  return (
    <ToolRow
      callId={props.callId}
      host={hostOf(props)}
      state={model.state}
      icon="globe"
      title={t('tool.web_fetch.title')}
      summary={model.summary}
      suffix={
        model.suffix === undefined ? undefined : (
          <span className="qp-caption">{t(model.suffix)}</span>
        )
      }
    >
      {body?.kind === 'page' && <WebPageSummary {...body.page} />}
      {body?.kind === 'plain' && <PlainDetails body={body} label={t('tool.web_fetch.title')} />}
    </ToolRow>
  );
}
