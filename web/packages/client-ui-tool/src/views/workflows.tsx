// The workflow cards — `workflow_run`, `workflow_status`, `workflow_stop` — and their parts: a
// run's status, its steps in order (calls with their status, report sections as Markdown).
import { useLocale, useT } from '@qilin-agent/i18n';
import { formatDuration } from '../models/sessionLink';
import {
  stepDot,
  workflowDot,
  workflowRunModel,
  workflowStatusModel,
  workflowStopModel,
  type StepRow,
  type WorkflowRow,
  type WorkflowState,
} from '../models/workflows';
import type { ToolCallOwnerProps } from '../slots';
import { PlainDetails, TextBlock, ToolRow, useToolHooks } from './card';
import { RecordedTime } from './sessionParts';
import { Generic, hostOf, useModel } from './shared';

/** A run's status: a dot in its static colour and the word. */
export function WorkflowStatusBadge(props: { status: WorkflowState }) {
  const t = useT();
  return (
    <span className="qt-workflow-status" data-status={props.status}>
      <span className={`qp-dot qp-dot--${workflowDot(props.status)}`} aria-hidden="true" />
      {t(`workflows.status.${props.status}`)}
    </span>
  );
}

/** A report section's Markdown, as the host renders the model's text (or as it is). */
function ReportText(props: { text: string }) {
  const Markdown = useToolHooks().markdown;
  if (Markdown === undefined) return <p className="qt-workflow-report__text">{props.text}</p>;
  return <Markdown text={props.text} />;
}

/** One step: a call with its tool, title and status (replayed ones marked); or a report section. */
function StepItem(props: { step: StepRow }) {
  const t = useT();
  const { step } = props;
  if (step.kind === 'report') {
    return (
      <li className="qt-workflow-step" data-kind="report" data-index={step.index}>
        <section className="qt-workflow-report">
          <h5>{step.title}</h5>
          <ReportText text={step.text} />
        </section>
      </li>
    );
  }
  return (
    <li
      className="qt-workflow-step"
      data-kind="call"
      data-index={step.index}
      data-status={step.status}
      {...(step.callId === undefined ? {} : { 'data-step-call': step.callId })}
    >
      <div className="qt-workflow-step__line">
        <span className="qt-loop-iteration__status">
          <span className={`qp-dot qp-dot--${stepDot(step.status)}`} aria-hidden="true" />
          {t(`workflows.stepStatus.${step.status}`)}
        </span>
        <code className="qt-workflow-step__tool">{step.tool}</code>
        <span className="qt-workflow-step__title">{step.title}</span>
        {step.replayed && (
          <span className="qt-workflow-step__replayed" title={t('workflows.replayedNote')}>
            {t('workflows.replayed')}
          </span>
        )}
      </div>
    </li>
  );
}

/** A run's steps in order, or that it has none yet. */
function WorkflowSteps(props: { run: WorkflowRow }) {
  const t = useT();
  const { run } = props;
  if (run.steps.length === 0) return <p className="qp-caption">{t('workflows.noSteps')}</p>;
  return (
    <ol className="qt-workflow-steps" aria-label={t('workflows.stepsOf', { name: run.workflow })}>
      {run.steps.map((step) => (
        <StepItem key={step.index} step={step} />
      ))}
    </ol>
  );
}

/** A JSON value as the card shows it: text as it is, anything else pretty-printed. */
function asText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value, null, 2);
}

/** A whole run: status, dates, duration, steps, result or error, the arguments. */
function WorkflowDetails(props: { run: WorkflowRow; withName?: boolean }) {
  const t = useT();
  const locale = useLocale();
  const { run } = props;
  return (
    <div className="qt-workflow" data-run={run.runId} data-status={run.status}>
      {props.withName === true && (
        <h4 className="qt-block__label">
          <code>{run.workflow}</code>
        </h4>
      )}
      {run.description !== undefined && <p className="qt-verdict">{run.description}</p>}
      <dl className="qt-receipt">
        <dt>{t('workflows.statusLabel')}</dt>
        <dd>
          <WorkflowStatusBadge status={run.status} />
        </dd>
        <dt>{t('workflows.started')}</dt>
        <dd>
          <RecordedTime at={run.startedAt} />
        </dd>
        {run.endedAt !== undefined && (
          <>
            <dt>{t('workflows.ended')}</dt>
            <dd>
              <RecordedTime at={run.endedAt} />
            </dd>
          </>
        )}
        {run.durationMs !== undefined && (
          <>
            <dt>{t('workflows.duration')}</dt>
            <dd>{formatDuration(run.durationMs, locale)}</dd>
          </>
        )}
      </dl>
      <section className="qt-block">
        <h4 className="qt-block__label">{t('workflows.steps')}</h4>
        <WorkflowSteps run={run} />
      </section>
      {run.error !== undefined && <TextBlock label={t('workflows.error')} text={run.error} />}
      {run.result !== undefined && (
        <TextBlock label={t('workflows.result')} text={asText(run.result)} />
      )}
      <TextBlock label={t('workflows.args')} text={asText(run.args)} />
    </div>
  );
}

/** The row's words for a run: its status and, once ended, how long it took. */
function useRunSuffix(): (run: WorkflowRow, background?: boolean) => string {
  const t = useT();
  const locale = useLocale();
  return (run, background) =>
    [
      t(`workflows.status.${run.status}`),
      run.durationMs === undefined ? undefined : formatDuration(run.durationMs, locale),
      t('workflows.stepCount', { count: run.steps.length }),
      background === true ? t('workflows.background') : undefined,
    ]
      .filter((part) => part !== undefined)
      .join(' · ');
}

/**
 * `workflow_run`: the workflow's name on the row, with its status, duration and how many calls
 * it made; inside, the run's steps in order, its report sections, its result or error. The
 * calls the workflow made render under the card as code-mode calls do under `run_code`.
 */
export function WorkflowRunView(props: ToolCallOwnerProps) {
  const t = useT();
  const model = useModel(props, workflowRunModel);
  const suffix = useRunSuffix();
  if (model.kind === 'generic') return <Generic view={props} model={model} />;
  const title = t('tool.workflow_run.title');
  const { run } = model;
  return (
    <ToolRow
      callId={props.callId}
      host={hostOf(props)}
      state={model.state}
      icon="workflow"
      title={title}
      summary={
        run?.description === undefined
          ? model.workflow
          : `${model.workflow ?? run.workflow} — ${run.description}`
      }
      suffix={
        run === undefined
          ? model.background === true
            ? t('workflows.background')
            : undefined
          : suffix(run, model.background)
      }
      capsule={
        run === undefined || run.status === 'completed' || run.status === 'running'
          ? undefined
          : t(`workflows.status.${run.status}`)
      }
    >
      {run !== undefined && <WorkflowDetails run={run} />}
      {model.body !== undefined && <PlainDetails body={model.body} label={title} />}
    </ToolRow>
  );
}

/** `workflow_status`: the runs as the call read them then (not as they stand now). */
export function WorkflowStatusView(props: ToolCallOwnerProps) {
  const t = useT();
  const model = useModel(props, workflowStatusModel);
  const suffix = useRunSuffix();
  if (model.kind === 'generic') return <Generic view={props} model={model} />;
  const title = t('tool.workflow_status.title');
  const only = model.runs?.length === 1 ? model.runs[0] : undefined;
  return (
    <ToolRow
      callId={props.callId}
      host={hostOf(props)}
      state={model.state}
      icon="workflow"
      title={title}
      summary={
        only !== undefined
          ? only.workflow
          : model.runs !== undefined
            ? t('workflows.count', { count: model.runs.length })
            : model.id
      }
      suffix={only === undefined ? undefined : suffix(only)}
    >
      {model.runs !== undefined &&
        (model.runs.length === 0 ? (
          <p className="qp-caption">{t('workflows.none')}</p>
        ) : (
          model.runs.map((run) => <WorkflowDetails key={run.runId} run={run} withName />)
        ))}
      {model.body !== undefined && <PlainDetails body={model.body} label={title} />}
    </ToolRow>
  );
}

/** `workflow_stop`: which run, and the run as the call left it. */
export function WorkflowStopView(props: ToolCallOwnerProps) {
  const t = useT();
  const model = useModel(props, workflowStopModel);
  const suffix = useRunSuffix();
  if (model.kind === 'generic') return <Generic view={props} model={model} />;
  const title = t('tool.workflow_stop.title');
  return (
    <ToolRow
      callId={props.callId}
      host={hostOf(props)}
      state={model.state}
      icon="workflow"
      title={title}
      summary={model.run === undefined ? model.id : model.run.workflow}
      suffix={model.run === undefined ? undefined : suffix(model.run)}
    >
      {model.run !== undefined && <WorkflowDetails run={model.run} />}
      {model.body !== undefined && <PlainDetails body={model.body} label={title} />}
    </ToolRow>
  );
}
