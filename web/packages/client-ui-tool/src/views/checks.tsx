// The `checks_run` card: a check-run receipt, one row per check.
import { useLocale, useT } from '@qilin-agent/i18n';
import { formatBytes, TerminalOutput } from '@qilin-agent/ui-primitives';
import { checksRunModel, type CheckRow, type ChecksReceipt } from '../models/checks';
import type { CheckConclusion } from '@qilin-agent/protocol';
import { formatDuration } from '../models/sessionLink';
import type { StartedToolCallViewProps, ToolCallHost, ToolCallOwnerProps } from '../slots';
import { PlainDetails, ToolRow } from './card';
import { Generic, PreparingRow, hostOf, useModel } from './shared';

/** The glyph of each conclusion; its word is said beside it for assistive technology. */
const GLYPHS: Record<CheckConclusion, string> = { success: '✓', failure: '✕', neutral: '–' };

/**
 * A check's conclusion: its glyph in the conclusion's static colour and its word; a run that
 * timed out or failed to start says that instead of "failed".
 */
export function CheckConclusionMark(props: {
  conclusion: CheckConclusion;
  status?: CheckRow['status'];
  /** Show the word beside the glyph (the row's suffix does; a check's row names it to readers only). */
  withWord?: boolean;
}) {
  const t = useT();
  const word =
    props.status === 'timed_out' || props.status === 'failed_to_start'
      ? t(`checks.status.${props.status}`)
      : t(`checks.conclusion.${props.conclusion}`);
  return (
    <span
      className="qt-check-mark"
      data-conclusion={props.conclusion}
      {...(props.status === undefined ? {} : { 'data-status': props.status })}
    >
      <span className="qt-check-mark__glyph" aria-hidden="true">
        {GLYPHS[props.conclusion]}
      </span>
      {props.withWord === true ? (
        <span>{word}</span>
      ) : (
        <span className="qt-visually-hidden">{word}</span>
      )}
    </span>
  );
}

/** An annotation's place: `path:line:col`, opened through the host when it can. */
function AnnotationPlace(props: {
  path: string;
  line?: number | undefined;
  column?: number | undefined;
  openFile: ToolCallHost['openFile'];
}) {
  const t = useT();
  const { path, line, column, openFile } = props;
  const place = [path, line, line === undefined ? undefined : column]
    .filter((part) => part !== undefined)
    .join(':');
  if (openFile === undefined) return <code className="qt-annotation__place">{place}</code>;
  return (
    <button
      type="button"
      className="qp-link qt-annotation__place"
      aria-label={t('row.openFile', { path: place })}
      onClick={() =>
        line === undefined ? openFile(path) : openFile(path, { first: line, last: line })
      }
    >
      {place}
    </button>
  );
}

/**
 * One check's row: its conclusion, id, summary, duration, cached mark; its command, exit,
 * annotations, output tail and spilled file on demand.
 */
function CheckRunItem(props: { run: CheckRow; openFile: ToolCallHost['openFile'] }) {
  const t = useT();
  const locale = useLocale();
  const { run, openFile } = props;
  return (
    <li className="qt-check" data-check={run.id} data-conclusion={run.conclusion}>
      <div className="qt-check__line">
        <CheckConclusionMark conclusion={run.conclusion} status={run.status} />
        <code className="qt-check__id">{run.id}</code>
        <span className="qt-check__summary">{run.summary}</span>
        <span className="qp-caption qt-check__facts">
          {formatDuration(run.durationMs, locale)}
          {run.cached && (
            <>
              {' · '}
              <span className="qt-check__cached" title={t('checks.cachedNote')}>
                {t('checks.cached')}
              </span>
            </>
          )}
        </span>
      </div>
      <details className="qt-check__details">
        <summary>
          {run.annotations.length + run.omittedAnnotations === 0
            ? t('checks.details')
            : t('checks.annotations', { count: run.annotations.length + run.omittedAnnotations })}
        </summary>
        <div className="qt-check__body">
          {run.description !== undefined && <p className="qt-verdict">{run.description}</p>}
          <pre className="qt-command" tabIndex={0} aria-label={t('checks.command')}>
            {run.command}
          </pre>
          {(run.status !== 'completed' || run.exitCode !== undefined) && (
            <p className="qp-caption">
              {run.status !== 'completed'
                ? t(`checks.status.${run.status}`)
                : t('checks.exitCode', { code: run.exitCode ?? 0 })}
            </p>
          )}
          {run.annotations.length > 0 && (
            <ul className="qt-annotations" aria-label={t('checks.annotationsOf', { id: run.id })}>
              {run.annotations.map((note, index) => (
                <li key={index} className="qt-annotation" data-level={note.level}>
                  <AnnotationPlace
                    path={note.path}
                    line={note.line}
                    column={note.column}
                    openFile={openFile}
                  />
                  <span className="qt-annotation__level">{t(`checks.level.${note.level}`)}</span>
                  <span className="qt-annotation__message">{note.message}</span>
                </li>
              ))}
            </ul>
          )}
          {run.omittedAnnotations > 0 && (
            <p className="qp-caption">{t('checks.omitted', { count: run.omittedAnnotations })}</p>
          )}
          {run.output !== '' && (
            <section className="qt-block">
              <h4 className="qt-block__label">{t('checks.output')}</h4>
              <TerminalOutput text={run.output} label={run.command} />
            </section>
          )}
          {run.spill !== undefined && (
            <p className="qp-caption">
              {openFile === undefined ? (
                t('checks.spilled', {
                  size: formatBytes(run.spill.totalBytes),
                  path: run.spill.path,
                })
              ) : (
                <button
                  type="button"
                  className="qp-link"
                  onClick={() => run.spill !== undefined && openFile(run.spill.path)}
                >
                  {t('checks.spilled', {
                    size: formatBytes(run.spill.totalBytes),
                    path: run.spill.path,
                  })}
                </button>
              )}
            </p>
          )}
        </div>
      </details>
    </li>
  );
}

/** A run of checks: one row per check, in declaration order, with the overall summary. */
export function ChecksReceiptList(props: {
  receipt: ChecksReceipt;
  label: string;
  openFile?: ToolCallHost['openFile'];
}) {
  const t = useT();
  const { receipt } = props;
  if (receipt.runs.length === 0) return <p className="qp-caption">{t('checks.none')}</p>;
  return (
    <ol className="qt-checks" aria-label={props.label}>
      {receipt.runs.map((run) => (
        <CheckRunItem key={run.id} run={run} openFile={props.openFile} />
      ))}
    </ol>
  );
}

/**
 * `checks_run`: while the arguments stream, the row alone; once dispatched, the overall
 * conclusion on the row and one row per check inside ([`ChecksRunCard`]).
 */
export function ChecksRunView(props: ToolCallOwnerProps) {
  const t = useT();
  if (props.phase === 'preparing') {
    return <PreparingRow view={props} icon="checklist" title={t('tool.checks_run.title')} />;
  }
  return <ChecksRunCard {...props} />;
}

/** The check-run card of a dispatched `checks_run` call: it reads the call's arguments. */
export function ChecksRunCard(props: StartedToolCallViewProps) {
  const t = useT();
  const model = useModel(props, checksRunModel);
  if (model.kind === 'generic') return <Generic view={props} model={model} />;
  const title = t('tool.checks_run.title');
  const host = hostOf(props);
  const { receipt } = model;
  const asked = model.ids === undefined ? t('checks.all') : model.ids.join(', ');
  return (
    <ToolRow
      callId={props.callId}
      host={host}
      state={model.state}
      icon="checklist"
      title={title}
      summary={receipt === undefined ? asked : receipt.summary}
      suffix={
        receipt === undefined ? undefined : (
          <CheckConclusionMark conclusion={receipt.conclusion} withWord />
        )
      }
    >
      {receipt !== undefined && (
        <ChecksReceiptList
          receipt={receipt}
          label={t('checks.runsOf', { title })}
          {...(host.openFile === undefined ? {} : { openFile: host.openFile })}
        />
      )}
      {model.body !== undefined && <PlainDetails body={model.body} label={title} />}
    </ToolRow>
  );
}
