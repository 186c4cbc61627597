// The loop cards — `loop_start`, `loop_status`, `loop_stop` — and their parts: a loop's stop
// condition, one row per iteration with its report, the stop reason. A `loop_start` card follows
// its loop live through the host's `useLoop`.
import { useLocale, useT } from '@qilin-agent/i18n';
import { useId, useState } from 'react';
import { formatCost, formatTokens } from '../models/agents';
import {
  FILE_CHANGE_KINDS,
  changedLines,
  iterationDot,
  type FileChangeKind,
  loopStartModel,
  loopStatusModel,
  loopStopModel,
  stopDot,
  type IterationRow,
  type LoopRow,
  type LoopStopReason,
} from '../models/loops';
import { formatDuration } from '../models/sessionLink';
import type { ToolCallOwnerProps, UseLoop } from '../slots';
import { PlainDetails, ToolRow, useToolHooks } from './card';
import { CheckConclusionMark } from './checks';
import { RecordedTime } from './sessionParts';
import { Generic, hostOf, useModel } from './shared';

/** Why a loop stopped: a dot in the reason's static colour and the word. */
export function LoopStopBadge(props: { reason: LoopStopReason }) {
  const t = useT();
  return (
    <span className="qt-loop-stop" data-reason={props.reason}>
      <span className={`qp-dot qp-dot--${stopDot(props.reason)}`} aria-hidden="true" />
      {t(`loops.stop.${props.reason}`)}
    </span>
  );
}

/** Prompts longer than this many characters, or lines, are clamped until shown whole. */
const CLAMP_CHARS = 240;
const CLAMP_LINES = 3;

/** The loop's prompt, clamped to a few lines with "Show all" when it is longer. */
function LoopPrompt(props: { prompt: string }) {
  const t = useT();
  const id = useId();
  const [whole, setWhole] = useState(false);
  const long = props.prompt.length > CLAMP_CHARS || props.prompt.split('\n').length > CLAMP_LINES;
  return (
    <section className="qt-block">
      <h4 className="qt-block__label">{t('loops.prompt')}</h4>
      <p
        id={id}
        className="qt-loop__prompt"
        data-clamped={long && !whole ? 'true' : undefined}
        tabIndex={0}
      >
        {props.prompt}
      </p>
      {long && (
        <button
          type="button"
          className="qp-link"
          aria-expanded={whole}
          aria-controls={id}
          onClick={() => setWhole(!whole)}
        >
          {t(whole ? 'loops.promptLess' : 'loops.promptAll')}
        </button>
      )}
    </section>
  );
}

/** Tokens in and out, and the cost when known, in the viewer's numbers. */
function Spend(props: { input: number; output: number; costUsd?: number | undefined }) {
  const t = useT();
  const locale = useLocale();
  return (
    <>
      {t('agents.tokens', {
        input: formatTokens(props.input, locale),
        output: formatTokens(props.output, locale),
      })}
      {props.costUsd === undefined ? null : ` · ${formatCost(props.costUsd, locale)}`}
    </>
  );
}

/** The files an iteration changed: a count with +/− on the line, the list on demand. */
function IterationFiles(props: { iteration: IterationRow }) {
  const t = useT();
  const { iteration } = props;
  if (iteration.files.length === 0) {
    return iteration.status === 'running' ? null : (
      <span className="qp-caption">{t('loops.files.none')}</span>
    );
  }
  const lines = changedLines(iteration);
  return (
    <details className="qt-loop-files">
      <summary>
        {t('loops.files.count', { count: iteration.files.length })}{' '}
        <span className="qt-loop-files__plus">+{lines.insertions}</span>{' '}
        <span className="qt-loop-files__minus">−{lines.deletions}</span>
      </summary>
      <ul
        className="qt-loop-files__list"
        aria-label={t('loops.files.of', { number: iteration.number })}
      >
        {iteration.files.map((file) => (
          <li key={file.path} data-change={file.change}>
            <span className="qt-loop-files__change">
              {FILE_CHANGE_KINDS.includes(file.change as FileChangeKind)
                ? t(`loops.change.${file.change as FileChangeKind}`)
                : file.change}
            </span>
            <code className="qt-loop-files__path">{file.path}</code>
            <span className="qt-loop-files__plus">+{file.insertions}</span>
            <span className="qt-loop-files__minus">−{file.deletions}</span>
          </li>
        ))}
      </ul>
    </details>
  );
}

/** One iteration's row: its number and status, what it changed, its checks, spend, outcome. */
function IterationItem(props: { iteration: IterationRow }) {
  const t = useT();
  const locale = useLocale();
  const { iteration } = props;
  return (
    <li
      className="qt-loop-iteration"
      data-iteration={iteration.number}
      data-status={iteration.status}
    >
      <div className="qt-loop-iteration__line">
        <span className="qt-loop-iteration__number">
          {t('loops.iteration', { number: iteration.number })}
        </span>
        <span className="qt-loop-iteration__status">
          <span className={`qp-dot qp-dot--${iterationDot(iteration.status)}`} aria-hidden="true" />
          {t(`loops.iterationStatus.${iteration.status}`)}
        </span>
        {iteration.checks.length > 0 && (
          <span
            className="qt-loop-iteration__checks"
            aria-label={t('loops.checksOf', { number: iteration.number })}
          >
            {iteration.checks.map((check) => (
              <span
                key={check.id}
                className="qt-loop-check"
                data-check={check.id}
                {...(check.summary === undefined ? {} : { title: check.summary })}
              >
                <CheckConclusionMark conclusion={check.conclusion} />
                <code>{check.id}</code>
              </span>
            ))}
          </span>
        )}
        {iteration.promiseSeen && (
          <span className="qt-loop-iteration__promise">{t('loops.promiseSeen')}</span>
        )}
        <span className="qp-caption qt-loop-iteration__facts">
          <Spend
            input={iteration.inputTokens}
            output={iteration.outputTokens}
            costUsd={iteration.costUsd}
          />
          {iteration.durationMs === undefined
            ? null
            : ` · ${formatDuration(iteration.durationMs, locale)}`}
        </span>
      </div>
      <div className="qt-loop-iteration__more">
        <IterationFiles iteration={iteration} />
        <RecordedTime at={iteration.startedAt} className="qp-caption qt-loop-iteration__time" />
        {iteration.href !== undefined && (
          <a className="qt-child-link" href={iteration.href}>
            {t('loops.openIteration', { number: iteration.number })}
          </a>
        )}
      </div>
      {iteration.outcome !== undefined && (
        <p className="qt-loop-iteration__outcome">{iteration.outcome}</p>
      )}
    </li>
  );
}

/** A loop's iterations, one row each, in order; the running one says so. */
export function LoopIterations(props: { loop: LoopRow }) {
  const t = useT();
  const { loop } = props;
  if (loop.iterations.length === 0) {
    return (
      <p className="qp-caption qt-loop__waiting">
        {loop.status === 'running' ? t('loops.noIterationYet') : t('loops.noIterations')}
      </p>
    );
  }
  return (
    <ol className="qt-loop-iterations" aria-label={t('loops.iterationsOf', { id: loop.loopId })}>
      {loop.iterations.map((iteration) => (
        <IterationItem key={iteration.number} iteration={iteration} />
      ))}
    </ol>
  );
}

/** What stops a loop: the checks that must pass, the promise, the limits. */
function LoopCondition(props: { loop: LoopRow }) {
  const t = useT();
  const locale = useLocale();
  const { loop } = props;
  const budget = loop.budget;
  return (
    <dl className="qt-receipt">
      <dt>{t('loops.until')}</dt>
      <dd>
        {loop.checks.length > 0 && (
          <span className="qt-goal__checks">
            {t('loops.untilChecks')}{' '}
            {loop.checks.map((id) => (
              <code key={id}>{id}</code>
            ))}
          </span>
        )}
        {loop.checks.length > 0 && loop.promise !== undefined && ' · '}
        {loop.promise !== undefined && (
          <span>
            {t('loops.untilPromise')} <code>{loop.promise}</code>
          </span>
        )}
        {loop.checks.length === 0 && loop.promise === undefined && t('loops.untilMax')}
      </dd>
      <dt>{t('loops.maxIterations')}</dt>
      <dd>{loop.maxIterations}</dd>
      <dt>{t('loops.context')}</dt>
      <dd>{t(loop.freshContext ? 'loops.fresh' : 'loops.sameSession')}</dd>
      {budget !== undefined &&
        (budget.tokens !== undefined ||
          budget.costUsd !== undefined ||
          budget.durationSecs !== undefined) && (
          <>
            <dt>{t('loops.budget')}</dt>
            <dd>
              {[
                budget.tokens === undefined
                  ? undefined
                  : t('loops.budgetTokens', { tokens: formatTokens(budget.tokens, locale) }),
                budget.costUsd === undefined ? undefined : formatCost(budget.costUsd, locale),
                budget.durationSecs === undefined
                  ? undefined
                  : formatDuration(budget.durationSecs * 1000, locale),
              ]
                .filter((part) => part !== undefined)
                .join(' · ')}
            </dd>
          </>
        )}
      <dt>{t('loops.started')}</dt>
      <dd>
        <RecordedTime at={loop.startedAt} />
      </dd>
      {loop.endedAt !== undefined && (
        <>
          <dt>{t('loops.ended')}</dt>
          <dd>
            <RecordedTime at={loop.endedAt} />
          </dd>
        </>
      )}
      <dt>{t('loops.spent')}</dt>
      <dd>
        <Spend input={loop.inputTokens} output={loop.outputTokens} costUsd={loop.costUsd} />
      </dd>
    </dl>
  );
}

/** How the loop ended, or where it stands: the stop reason, or the iteration running. */
export function LoopVerdict(props: { loop: LoopRow }) {
  const t = useT();
  const { loop } = props;
  if (loop.status === 'finished' && loop.stopReason !== undefined) {
    return (
      <p className="qt-verdict qt-loop__verdict" data-reason={loop.stopReason}>
        <LoopStopBadge reason={loop.stopReason} />{' '}
        {t(`loops.stopSentence.${loop.stopReason}`, { count: loop.iterations.length })}
      </p>
    );
  }
  return (
    <p className="qt-verdict qt-loop__verdict" role="status">
      {t('loops.runningOf', { number: loop.iterations.length, max: loop.maxIterations })}
    </p>
  );
}

/** A whole loop: its verdict, its iterations, its prompt and condition. */
function LoopDetails(props: { loop: LoopRow; withIterations?: boolean }) {
  const { loop } = props;
  return (
    <div className="qt-loop" data-loop={loop.loopId} data-status={loop.status}>
      <LoopVerdict loop={loop} />
      {props.withIterations !== false && <LoopIterations loop={loop} />}
      <LoopPrompt prompt={loop.prompt} />
      <LoopCondition loop={loop} />
    </div>
  );
}

/** A host without a loop feed follows nothing: the record stays as the call returned it. */
const followNothing: UseLoop = (known) => known;

/** An empty loop record, for the hook's call before a card has one (it follows nothing). */
const NO_LOOP: LoopRow = {
  loopId: '',
  prompt: '',
  checks: [],
  maxIterations: 0,
  freshContext: true,
  status: 'running',
  iterations: [],
  startedAt: '',
  inputTokens: 0,
  outputTokens: 0,
};

/** The row's words for a loop: where it stands. */
function useLoopSuffix(): (loop: LoopRow) => string {
  const t = useT();
  return (loop) =>
    loop.status === 'finished' && loop.stopReason !== undefined
      ? t(`loops.stop.${loop.stopReason}`)
      : t('loops.runningOf', { number: loop.iterations.length, max: loop.maxIterations });
}

/**
 * `loop_start`: the prompt's first line on the row; the loop's iterations under it, one row
 * each, kept live from the session's `loop.*` events through the host's `useLoop` (the record
 * the call returned until anything newer came); the stop reason once it finished; the prompt,
 * the stop condition, the budget and the spend inside.
 */
export function LoopStartView(props: ToolCallOwnerProps) {
  const t = useT();
  const model = useModel(props, loopStartModel);
  const useLoop = useToolHooks().useLoop ?? followNothing;
  const recorded = model.kind === 'loopStart' ? model.loop : undefined;
  const live = useLoop(recorded ?? NO_LOOP);
  const suffix = useLoopSuffix();
  if (model.kind === 'generic') return <Generic view={props} model={model} />;
  const title = t('tool.loop_start.title');
  const loop = recorded === undefined ? undefined : live;
  // The call returns at once; the row sweeps while the loop it started runs.
  const state = loop?.status === 'running' && model.state === 'ok' ? 'running' : model.state;
  return (
    <div className="qt-loop-card" data-loop={loop?.loopId}>
      <ToolRow
        callId={props.callId}
        host={hostOf(props)}
        state={state}
        icon="loop"
        title={title}
        summary={model.summary}
        suffix={loop === undefined ? undefined : suffix(loop)}
      >
        {loop !== undefined && <LoopDetails loop={loop} withIterations={false} />}
        {model.body !== undefined && <PlainDetails body={model.body} label={title} />}
      </ToolRow>
      {loop !== undefined && (
        <div className="qt-loop-card__live">
          <LoopIterations loop={loop} />
          {loop.status === 'finished' && <LoopVerdict loop={loop} />}
        </div>
      )}
    </div>
  );
}

/** `loop_status`: the loops as the call read them then (not as they stand now). */
export function LoopStatusView(props: ToolCallOwnerProps) {
  const t = useT();
  const model = useModel(props, loopStatusModel);
  const suffix = useLoopSuffix();
  if (model.kind === 'generic') return <Generic view={props} model={model} />;
  const title = t('tool.loop_status.title');
  const only = model.loops?.length === 1 ? model.loops[0] : undefined;
  return (
    <ToolRow
      callId={props.callId}
      host={hostOf(props)}
      state={model.state}
      icon="loop"
      title={title}
      summary={
        only !== undefined
          ? only.prompt.split('\n')[0]
          : model.loops !== undefined
            ? t('loops.count', { count: model.loops.length })
            : model.id
      }
      suffix={only === undefined ? undefined : suffix(only)}
    >
      {model.loops !== undefined &&
        (model.loops.length === 0 ? (
          <p className="qp-caption">{t('loops.none')}</p>
        ) : (
          model.loops.map((loop) => <LoopDetails key={loop.loopId} loop={loop} />)
        ))}
      {model.body !== undefined && <PlainDetails body={model.body} label={title} />}
    </ToolRow>
  );
}

/** `loop_stop`: which loop, and the loop as the call left it. */
export function LoopStopView(props: ToolCallOwnerProps) {
  const t = useT();
  const model = useModel(props, loopStopModel);
  const suffix = useLoopSuffix();
  if (model.kind === 'generic') return <Generic view={props} model={model} />;
  const title = t('tool.loop_stop.title');
  return (
    <ToolRow
      callId={props.callId}
      host={hostOf(props)}
      state={model.state}
      icon="loop"
      title={title}
      summary={model.loop === undefined ? model.id : model.loop.prompt.split('\n')[0]}
      suffix={model.loop === undefined ? undefined : suffix(model.loop)}
    >
      {model.loop !== undefined && <LoopDetails loop={model.loop} />}
      {model.body !== undefined && <PlainDetails body={model.body} label={title} />}
    </ToolRow>
  );
}
