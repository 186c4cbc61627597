import { useT } from '@qilin-agent/i18n';
import { TerminalOutput } from '@qilin-agent/ui-primitives';
import { jobOutputModel } from '../models/job';
import type { ToolCallOwnerProps } from '../slots';
import { PlainDetails, ToolRow } from './card';
import { Generic, hostOf, useModel } from './shared';

/** `job_output`: what a background job wrote since the last look, as the job's own output. */
export function JobOutputView(props: ToolCallOwnerProps) {
  const t = useT();
  const model = useModel(props, jobOutputModel);
  if (model.kind === 'generic') return <Generic view={props} model={model} />;
  const title = t('tool.job_output.title');
  const { body } = model;
  return (
    <ToolRow
      callId={props.callId}
      host={hostOf(props)}
      state={model.state}
      icon="terminal"
      title={title}
      summary={model.jobId}
      suffix={
        model.jobState === undefined ? undefined : (
          <span className="qp-caption">{t(model.jobState)}</span>
        )
      }
      capsule={model.capsule === undefined ? undefined : t(model.capsule)}
      statusInDetails
    >
      {model.jobState !== undefined && model.jobDot !== undefined && (
        <p className="qt-job-state">
          <span className={`qp-dot qp-dot--${model.jobDot}`} aria-hidden="true" />
          {t(model.jobState)}
        </p>
      )}
      {body?.kind === 'job' && (
        <>
          <pre className="qt-command" tabIndex={0}>
            <span aria-hidden="true">$ </span>
            {body.command}
          </pre>
          <TerminalOutput text={body.output} label={model.jobId ?? title} />
        </>
      )}
      {body?.kind === 'plain' && <PlainDetails body={body} label={title} />}
    </ToolRow>
  );
}
