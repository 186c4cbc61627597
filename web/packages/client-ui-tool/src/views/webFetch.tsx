import { useT } from '@qilin-agent/i18n';
import { WebPageSummary } from '@qilin-agent/ui-primitives';
import { webModel } from '../models/web';
import type { ToolCallViewProps } from '../slots';
import { PlainDetails, ToolCard } from './card';
import { Generic, hostOf, useModel } from './shared';

/** `web_fetch`: the web page card. */
export function WebFetchView(props: ToolCallViewProps) {
  const t = useT();
  const model = useModel(props, webModel);
  if (model.kind === 'generic') return <Generic view={props} model={model} />;
  const { body } = model;
  return (
    <ToolCard
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
    </ToolCard>
  );
}
