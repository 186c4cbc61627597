// The goal cards — `goal_create`, `goal_get`, `goal_update` — and the parts the page's goal
// banner shares with them: a goal's status badge and its budget meters.
import { useLocale, useT } from '@qilin-agent/i18n';
import { formatTokens } from '../models/agents';
import {
  goalCreateModel,
  goalDot,
  goalGetModel,
  goalUpdateModel,
  leftOf,
  type GoalMeasure,
  type GoalRow,
} from '../models/goals';
import type { GoalStatus, PauseCause } from '@qilin-agent/protocol';
import { formatDuration } from '../models/sessionLink';
import type { ToolCallHost, ToolCallOwnerProps } from '../slots';
import { PlainDetails, TextBlock, ToolRow } from './card';
import { CheckConclusionMark, ChecksReceiptList } from './checks';
import { RecordedTime } from './sessionParts';
import { Generic, hostOf, useModel } from './shared';

/** A goal's status: a dot in its static colour and the word, with why a paused goal is paused. */
export function GoalStatusBadge(props: { status: GoalStatus; pausedBecause?: PauseCause }) {
  const t = useT();
  const { status, pausedBecause } = props;
  return (
    <span className="qt-goal-status" data-status={status}>
      <span className={`qp-dot qp-dot--${goalDot(status)}`} aria-hidden="true" />
      {status === 'paused' && pausedBecause !== undefined
        ? t(`goals.paused.${pausedBecause}`)
        : t(`goals.status.${status}`)}
    </span>
  );
}

/** Which of a goal's measures. */
type MeasureName = 'tokens' | 'seconds' | 'turns';

/** A measure's amount in the viewer's words. */
function useAmount(): (name: MeasureName, amount: number) => string {
  const locale = useLocale();
  const t = useT();
  return (name, amount) =>
    name === 'tokens'
      ? formatTokens(amount, locale)
      : name === 'seconds'
        ? formatDuration(amount * 1000, locale)
        : t('goals.turnCount', { count: amount });
}

/** One measure: spent against its limit as a meter, what is left; spent alone without a limit. */
function GoalMeter(props: { name: MeasureName; measure: GoalMeasure }) {
  const t = useT();
  const amount = useAmount();
  const { name, measure } = props;
  const label = t(`goals.measure.${name}`);
  const left = leftOf(measure);
  const used = amount(name, measure.used);
  const text =
    measure.limit === undefined
      ? t('goals.usedNoLimit', { used })
      : t('goals.usedOf', {
          used,
          limit: amount(name, measure.limit),
          left: amount(name, left ?? 0),
        });
  return (
    <div className="qt-goal-meter" data-measure={name}>
      <span className="qt-goal-meter__label">{label}</span>
      {measure.limit !== undefined && (
        <meter
          className="qt-goal-meter__bar"
          min={0}
          max={Math.max(measure.limit, 1)}
          value={Math.min(measure.used, Math.max(measure.limit, 1))}
          high={Math.max(measure.limit, 1) * 0.8}
          optimum={0}
          aria-label={`${label}: ${text}`}
        />
      )}
      <span className="qt-goal-meter__text">{text}</span>
    </div>
  );
}

/** A goal's budget: tokens, time and turns, each spent against its limit. */
export function GoalMeters(props: { goal: Pick<GoalRow, MeasureName> }) {
  return (
    <div className="qt-goal-meters">
      <GoalMeter name="tokens" measure={props.goal.tokens} />
      <GoalMeter name="seconds" measure={props.goal.seconds} />
      <GoalMeter name="turns" measure={props.goal.turns} />
    </div>
  );
}

/** A goal as a call recorded it: objective, status, budget, checks, its last checks, dates. */
function GoalDetails(props: {
  goal: GoalRow;
  openFile: ToolCallHost['openFile'];
  /** Show the goal's last checks (a `goal_update` card shows the run it made instead). */
  withLastChecks?: boolean;
}) {
  const t = useT();
  const { goal } = props;
  return (
    <div className="qt-goal" data-goal={goal.id}>
      <p className="qt-goal__objective">{goal.objective}</p>
      <dl className="qt-receipt">
        <dt>{t('goals.statusLabel')}</dt>
        <dd>
          <GoalStatusBadge
            status={goal.status}
            {...(goal.pausedBecause === undefined ? {} : { pausedBecause: goal.pausedBecause })}
          />
        </dd>
        <dt>{t('goals.checksLabel')}</dt>
        <dd>
          {goal.checks.length === 0 ? (
            t('goals.allChecks')
          ) : (
            <span className="qt-goal__checks">
              {goal.checks.map((id) => (
                <code key={id}>{id}</code>
              ))}
            </span>
          )}
        </dd>
        {goal.reason !== undefined && (
          <>
            <dt>{t('goals.reason')}</dt>
            <dd>{goal.reason}</dd>
          </>
        )}
        <dt>{t('goals.created')}</dt>
        <dd>
          <RecordedTime at={goal.createdAt} className="qt-goal__time" />
        </dd>
        <dt>{t('goals.updated')}</dt>
        <dd>
          <RecordedTime at={goal.updatedAt} className="qt-goal__time" />
        </dd>
      </dl>
      <GoalMeters goal={goal} />
      {goal.evidence !== undefined && (
        <TextBlock label={t('goals.evidence')} text={goal.evidence} />
      )}
      {goal.lastChecks !== undefined && props.withLastChecks !== false && (
        <section className="qt-block">
          <h4 className="qt-block__label">
            {t('goals.lastChecks')}{' '}
            <CheckConclusionMark conclusion={goal.lastChecks.conclusion} withWord />
          </h4>
          <ChecksReceiptList
            receipt={goal.lastChecks}
            label={t('goals.lastChecks')}
            openFile={props.openFile}
          />
        </section>
      )}
    </div>
  );
}

/** `goal_create`: the objective on the row, the goal the runtime created inside. */
export function GoalCreateView(props: ToolCallOwnerProps) {
  const t = useT();
  const model = useModel(props, goalCreateModel);
  if (model.kind === 'generic') return <Generic view={props} model={model} />;
  const title = t('tool.goal_create.title');
  const host = hostOf(props);
  return (
    <ToolRow
      callId={props.callId}
      host={host}
      state={model.state}
      icon="goal"
      title={title}
      summary={model.objective}
      suffix={model.goal === undefined ? undefined : t(`goals.status.${model.goal.status}`)}
    >
      {model.goal !== undefined && <GoalDetails goal={model.goal} openFile={host.openFile} />}
      {model.body !== undefined && <PlainDetails body={model.body} label={title} />}
    </ToolRow>
  );
}

/** `goal_get`: the goal as the call read it, or that the session had none. */
export function GoalGetView(props: ToolCallOwnerProps) {
  const t = useT();
  const model = useModel(props, goalGetModel);
  if (model.kind === 'generic') return <Generic view={props} model={model} />;
  const title = t('tool.goal_get.title');
  const host = hostOf(props);
  const { goal } = model;
  return (
    <ToolRow
      callId={props.callId}
      host={host}
      state={model.state}
      icon="goal"
      title={title}
      summary={goal === undefined ? undefined : goal === null ? t('goals.none') : goal.objective}
      suffix={
        goal === undefined || goal === null
          ? undefined
          : goal.status === 'paused' && goal.pausedBecause !== undefined
            ? t(`goals.paused.${goal.pausedBecause}`)
            : t(`goals.status.${goal.status}`)
      }
    >
      {goal !== undefined && goal !== null && <GoalDetails goal={goal} openFile={host.openFile} />}
      {model.body !== undefined && <PlainDetails body={model.body} label={title} />}
    </ToolRow>
  );
}

/** `goal_update`: complete or blocked, accepted or refused, with the runtime's message. */
export function GoalUpdateView(props: ToolCallOwnerProps) {
  const t = useT();
  const model = useModel(props, goalUpdateModel);
  if (model.kind === 'generic') return <Generic view={props} model={model} />;
  const title = t('tool.goal_update.title');
  const host = hostOf(props);
  const verdict =
    model.accepted === undefined ? undefined : model.accepted ? 'accepted' : 'refused';
  return (
    <ToolRow
      callId={props.callId}
      host={host}
      state={model.state}
      icon="goal"
      title={title}
      summary={model.asked === undefined ? undefined : t(`goals.ask.${model.asked}`)}
      // A refusal is a capsule (the call itself ended fine); an acceptance a plain suffix.
      suffix={verdict === 'accepted' ? t('goals.verdict.accepted') : undefined}
      capsule={verdict === 'refused' ? t('goals.verdict.refused') : undefined}
    >
      {model.kind === 'goalUpdate' && props.phase !== 'preparing' && model.body === undefined && (
        <>
          {model.message !== undefined && (
            <p className="qt-verdict" data-verdict={verdict}>
              {model.message}
            </p>
          )}
          {model.failing !== undefined && model.failing.length > 0 && (
            <section className="qt-block">
              <h4 className="qt-block__label">{t('goals.failing')}</h4>
              <ChecksReceiptList
                receipt={{ runs: model.failing, conclusion: 'failure', summary: '' }}
                label={t('goals.failing')}
                openFile={host.openFile}
              />
            </section>
          )}
          {model.reason !== undefined && (
            <TextBlock label={t('goals.reason')} text={model.reason} />
          )}
          {model.evidence !== undefined && (
            <TextBlock label={t('goals.evidence')} text={model.evidence} />
          )}
          {model.checks !== undefined && model.accepted === true && (
            <section className="qt-block">
              <h4 className="qt-block__label">
                {t('goals.checksRun')}{' '}
                <CheckConclusionMark conclusion={model.checks.conclusion} withWord />
              </h4>
              <ChecksReceiptList
                receipt={model.checks}
                label={t('goals.checksRun')}
                openFile={host.openFile}
              />
            </section>
          )}
          {model.goal !== undefined && (
            <GoalDetails goal={model.goal} openFile={host.openFile} withLastChecks={false} />
          )}
        </>
      )}
      {model.body !== undefined && <PlainDetails body={model.body} label={title} />}
    </ToolRow>
  );
}
