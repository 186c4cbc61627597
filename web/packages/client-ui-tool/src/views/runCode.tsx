import { useT } from '@qilin-agent/i18n';
import { TerminalOutput } from '@qilin-agent/ui-primitives';
import { runCodeModel } from '../models/runCode';
import type { ToolCallOwnerProps } from '../slots';
import { TextBlock, ToolRow } from './card';
import { Generic, hostOf, useModel } from './shared';

/** `run_code`: the dispatch card; the calls its code made render under it. */
export function RunCodeView(props: ToolCallOwnerProps) {
  const t = useT();
  const model = useModel(props, runCodeModel);
  if (model.kind === 'generic') return <Generic view={props} model={model} />;
  const calls = props.phase === 'preparing' ? 0 : props.subCallCount;
  const title = t('tool.run_code.title');
  return (
    <ToolRow
      callId={props.callId}
      host={hostOf(props)}
      state={model.state}
      icon="code"
      title={title}
      summary={model.summary}
      suffix={
        calls === 0 ? undefined : (
          <span className="qp-caption">{t('row.calls', { count: calls })}</span>
        )
      }
    >
      {model.code !== undefined && (
        <>
          <TextBlock label={t('runCode.code')} text={model.code} language="python" />
          {model.progress !== undefined &&
            (model.progress !== '' || model.progressGap !== undefined) && (
              <TerminalOutput
                text={model.progress}
                {...(model.progressGap === undefined ? {} : { gap: model.progressGap })}
                label={model.summary ?? title}
              />
            )}
          {model.output !== undefined && (
            <TextBlock label={t('runCode.printed')} text={model.output} />
          )}
        </>
      )}
    </ToolRow>
  );
}
