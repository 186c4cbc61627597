// The search card `grep` and `glob` share.
import { useT } from '@qilin-agent/i18n';
import { SearchResults, type IconName } from '@qilin-agent/ui-primitives';
import type { SearchModel } from '../models/search';
import type { ToolCallOwnerProps } from '../slots';
import { PlainDetails, ToolRow } from './card';
import { hostOf } from './shared';

/** The search results card, with the tool's icon. */
export function SearchCard(props: {
  view: ToolCallOwnerProps;
  model: SearchModel;
  icon: IconName;
}) {
  const t = useT();
  const { model, view } = props;
  const { body } = model;
  const host = hostOf(view);
  return (
    <ToolRow
      callId={view.callId}
      host={host}
      state={model.state}
      icon={props.icon}
      title={t(model.title)}
      summary={model.summary}
      suffix={
        model.suffix === undefined ? undefined : (
          <span className="qp-caption">{t(model.suffix)}</span>
        )
      }
    >
      {body?.kind === 'results' && (
        <SearchResults
          pattern={model.pattern ?? ''}
          groups={body.groups}
          {...(host.openFile === undefined ? {} : { openFile: host.openFile })}
          {...(body.truncated ? { note: t('search.truncated') } : {})}
        />
      )}
      {body?.kind === 'plain' && <PlainDetails body={body} label={t(model.title)} />}
    </ToolRow>
  );
}
