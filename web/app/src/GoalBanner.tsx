// The goal banner above a session's conversation: the objective, where the goal stands, what it
// spent against its budget, its last checks, and the controls a person has over it.
import { useT } from '@qilin-agent/i18n';
import {
  CheckConclusionMark,
  GoalMeters,
  GoalStatusBadge,
  type GoalRow,
} from '@qilin-agent/client-ui-tool';
import type { GoalRecord, ResumeGoal } from '@qilin-agent/protocol';
import { useId, useState, type FormEvent } from 'react';
import { api, ServerError } from './api';
import { readGoal } from './goal';

/** What a banner's action asks the server for. */
type Action = 'pause' | 'resume' | 'clear' | 'raise';

/** The statuses a goal resumes from, raising its budget or not (the server refuses others). */
const RESUMABLE = new Set<GoalRow['status']>(['paused', 'budget_limited']);

/** A whole number of at least 1 typed in a field; `undefined` for an empty field. */
function amount(text: string): number | undefined | 'bad' {
  const trimmed = text.trim();
  if (trimmed === '') return undefined;
  const value = Number(trimmed);
  return Number.isSafeInteger(value) && value > 0 ? value : 'bad';
}

/** The small form that raises the goal's budget and resumes it. */
function RaiseForm(props: {
  goal: GoalRow;
  busy: boolean;
  onRaise: (raise: ResumeGoal) => void;
  onCancel: () => void;
}) {
  const t = useT();
  const id = useId();
  const { goal } = props;
  const [tokens, setTokens] = useState(goal.tokens.limit?.toString() ?? '');
  const [minutes, setMinutes] = useState(
    goal.seconds.limit === undefined ? '' : Math.ceil(goal.seconds.limit / 60).toString(),
  );
  const [turns, setTurns] = useState(goal.turns.limit?.toString() ?? '');
  const read = { tokens: amount(tokens), minutes: amount(minutes), turns: amount(turns) };
  const bad = Object.values(read).includes('bad');
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (bad) return;
    const raise: ResumeGoal = {};
    if (typeof read.tokens === 'number') raise.tokenBudget = read.tokens;
    if (typeof read.minutes === 'number') raise.timeBudget = read.minutes * 60;
    if (typeof read.turns === 'number') raise.maxTurns = read.turns;
    props.onRaise(raise);
  };
  const field = (name: string, label: string, value: string, set: (text: string) => void) => (
    <label className="qa-goal__field" htmlFor={`${id}-${name}`}>
      <span>{label}</span>
      <input
        id={`${id}-${name}`}
        name={name}
        inputMode="numeric"
        pattern="[0-9]*"
        value={value}
        onChange={(event) => set(event.target.value)}
        aria-invalid={amount(value) === 'bad'}
      />
    </label>
  );
  return (
    <form className="qa-goal__raise" aria-labelledby={`${id}-title`} onSubmit={submit}>
      <p id={`${id}-title`} className="qa-goal__raise-title">
        {t('goalBanner.raiseTitle')}
      </p>
      <div className="qa-goal__fields">
        {field('tokens', t('goalBanner.tokens'), tokens, setTokens)}
        {field('minutes', t('goalBanner.minutes'), minutes, setMinutes)}
        {field('turns', t('goalBanner.turns'), turns, setTurns)}
      </div>
      <p className="qa-muted qa-goal__hint">{t('goalBanner.raiseHint')}</p>
      <div className="qa-goal__actions">
        <button type="submit" className="qc-button qc-button--primary" disabled={props.busy || bad}>
          {t('goalBanner.apply')}
        </button>
        <button type="button" className="qc-button" onClick={props.onCancel}>
          {t('goalBanner.cancel')}
        </button>
      </div>
    </form>
  );
}

/**
 * The banner of a session's goal (not shown for a cleared goal): objective and status (why a
 * paused goal is paused), tokens, time and turns against the budget, the last checks'
 * conclusion; pause, resume, raise the budget, clear. Each action's answer is the goal's new
 * state, given to `onChange`; the session's stream brings the same state to every other tab.
 */
export function GoalBanner(props: {
  sessionId: string;
  goal: GoalRow;
  onChange: (goal: GoalRow) => void;
}) {
  const t = useT();
  const { sessionId, goal, onChange } = props;
  const [busy, setBusy] = useState<Action>();
  const [raising, setRaising] = useState(false);
  const [failure, setFailure] = useState<string>();
  if (goal.status === 'cleared') return null;
  const run = async (action: Action, request: () => Promise<GoalRecord>) => {
    setBusy(action);
    setFailure(undefined);
    try {
      const answer = readGoal(await request());
      if (answer !== undefined) onChange(answer);
      if (action === 'raise') setRaising(false);
    } catch (error) {
      setFailure(error instanceof ServerError ? error.message : String(error));
    } finally {
      setBusy(undefined);
    }
  };
  const last = goal.lastChecks;
  return (
    <section className="qa-goal" aria-label={t('goalBanner.label')} data-goal-status={goal.status}>
      <div className="qa-goal__head">
        <span className="qa-goal__label">{t('goalBanner.label')}</span>
        <p className="qa-goal__objective">{goal.objective}</p>
        <GoalStatusBadge
          status={goal.status}
          {...(goal.pausedBecause === undefined ? {} : { pausedBecause: goal.pausedBecause })}
        />
      </div>
      <GoalMeters goal={goal} />
      <p className="qa-goal__checks">
        <span className="qa-muted">{t('goals.lastChecks')}: </span>
        {last === undefined ? (
          <span className="qa-muted">{t('goalBanner.noChecks')}</span>
        ) : (
          <>
            <CheckConclusionMark conclusion={last.conclusion} withWord />{' '}
            <span className="qa-goal__summary">{last.summary}</span>
          </>
        )}
      </p>
      <div className="qa-goal__actions">
        {goal.status === 'active' && (
          <button
            type="button"
            className="qc-button"
            disabled={busy !== undefined}
            onClick={() => void run('pause', () => api.pauseGoal(sessionId))}
          >
            {t('goalBanner.pause')}
          </button>
        )}
        {RESUMABLE.has(goal.status) && (
          <button
            type="button"
            className="qc-button qc-button--primary"
            disabled={busy !== undefined}
            onClick={() => void run('resume', () => api.resumeGoal(sessionId))}
          >
            {t('goalBanner.resume')}
          </button>
        )}
        {RESUMABLE.has(goal.status) && !raising && (
          <button
            type="button"
            className="qc-button"
            disabled={busy !== undefined}
            onClick={() => setRaising(true)}
          >
            {t('goalBanner.raise')}
          </button>
        )}
        <button
          type="button"
          className="qc-button"
          disabled={busy !== undefined}
          onClick={() => void run('clear', () => api.clearGoal(sessionId))}
        >
          {t('goalBanner.clear')}
        </button>
      </div>
      {raising && (
        <RaiseForm
          goal={goal}
          busy={busy !== undefined}
          onRaise={(raise) => void run('raise', () => api.resumeGoal(sessionId, raise))}
          onCancel={() => setRaising(false)}
        />
      )}
      {failure !== undefined && (
        <p className="qa-goal__failure" role="alert">
          {t('goalBanner.failed', { message: failure })}
        </p>
      )}
    </section>
  );
}
