import { formatDateTime, useT, type Translate, useLocale } from '@qilin-agent/i18n';
import type { ContentBlock, RequestNode, ToolNode } from '@qilin-agent/protocol';
import { useEffect, useId, useMemo, useRef, type ReactNode } from 'react';
import type { ConversationSnapshot } from '@qilin-agent/protocol';
import { resolvedText } from './Request';
import { between, findCall, rawText } from './callPlace';

/** The props of [`CallTrajectory`]. */
export interface CallTrajectoryProps {
  /** The conversation the call is in. */
  snapshot: ConversationSnapshot;
  /** The call shown. */
  callId: string;
  /** Shows another call (a nested call, the parent `run_code`) in this view. */
  inspect: (callId: string) => void;
  /** Closes the view; focus goes back to what had it before the view opened. */
  onClose: () => void;
}

type Status = 'preparing' | 'running' | 'waiting' | 'ok' | 'error' | 'denied' | 'interrupted';

function statusOf(node: ToolNode): Status {
  if (node.outcome !== undefined) {
    const status = node.outcome.status;
    return status === 'ok' || status === 'error' || status === 'denied' ? status : 'interrupted';
  }
  return node.phase === 'done' ? 'interrupted' : node.phase;
}

function useTimes() {
  const locale = useLocale();
  return useMemo(() => {
    const numbers = new Intl.NumberFormat(locale, { maximumFractionDigits: 2 });
    return {
      // In the viewer's time zone, named.
      time: (at: string | undefined): string | undefined =>
        at === undefined ? undefined : formatDateTime(at, locale),
      duration: (ms: number): string =>
        ms < 1000 ? `${numbers.format(ms)} ms` : `${numbers.format(ms / 1000)} s`,
    };
  }, [locale]);
}

/** A raw value in a scrollable block, cut with a note when it is long. */
function Raw(props: { value: unknown; label: string }) {
  const t = useT();
  // A node the events did not touch keeps its values, so a long value is not written again
  // on every snapshot while the panel is open.
  const { text, cut } = useMemo(() => rawText(props.value), [props.value]);
  return (
    <>
      <pre className="qc-trajectory__raw" tabIndex={0} aria-label={props.label}>
        {text}
      </pre>
      {cut > 0 ? <p className="qc-trajectory__note">{t('trajectory.cut', { more: cut })}</p> : null}
    </>
  );
}

function Fact(props: { term: string; children: ReactNode }) {
  return (
    <div className="qc-trajectory__fact">
      <dt>{props.term}</dt>
      <dd>{props.children}</dd>
    </div>
  );
}

function callLabel(node: ToolNode): string {
  const shown = node.presentation;
  const what = shown === undefined ? '' : `${shown.action} ${shown.remark}`.trim();
  return what === '' ? node.toolName : `${node.toolName} · ${what}`;
}

function ContentView(props: { blocks: readonly ContentBlock[] }) {
  const t = useT();
  return (
    <>
      {props.blocks.map((block, index) => {
        const label = t('trajectory.block', { n: index + 1, type: block.type });
        if (block.type === 'text') return <Raw key={index} value={block.text} label={label} />;
        if (block.type === 'json') return <Raw key={index} value={block.value} label={label} />;
        if (block.type === 'image') {
          return (
            <p key={index} className="qc-trajectory__note">
              {t('trajectory.image', {
                type: block.mediaType,
                kb: Math.ceil((block.data.length * 3) / 4 / 1024),
              })}
            </p>
          );
        }
        return <Raw key={index} value={block} label={label} />;
      })}
    </>
  );
}

function requestState(request: RequestNode, t: Translate): string {
  return request.resolution === undefined
    ? t('trajectory.request.waiting')
    : resolvedText(request, t);
}

function RequestItem(props: { request: RequestNode }) {
  const t = useT();
  const times = useTimes();
  const { request } = props;
  const ask = request.ask;
  const resolution = request.resolution;
  return (
    <li className="qc-trajectory__request" data-request-id={request.requestId}>
      <p className="qc-trajectory__request-head">
        <strong>
          {ask.kind === 'approval' ? t('trajectory.request.approval') : t('request.question')}
        </strong>{' '}
        · {requestState(request, t)}
      </p>
      {ask.kind === 'approval' && ask.reason !== '' ? <p>{ask.reason}</p> : null}
      {ask.kind === 'question' ? (
        <ul>
          {ask.questions.map((question) => {
            const answer =
              resolution?.outcome === 'answered'
                ? resolution.answers.find((each) => each.id === question.id)
                : undefined;
            return (
              <li key={question.id}>
                {question.question}
                {answer === undefined ? null : ` → ${answer.answer.join(', ')}`}
              </li>
            );
          })}
        </ul>
      ) : null}
      {resolution?.outcome === 'denied' && resolution.reason ? <p>{resolution.reason}</p> : null}
      <p className="qc-trajectory__note">
        {t('trajectory.request.opened', { at: times.time(request.openedAt) ?? '—' })}
        {request.resolvedAt === undefined
          ? null
          : ` · ${t('trajectory.request.resolved', { at: times.time(request.resolvedAt) ?? '—' })}`}
      </p>
    </li>
  );
}

/**
 * The trajectory of one call, beside the transcript: its raw arguments, its result, when it was
 * named, dispatched and ended, where it sits in its turn (step, position, the `run_code` call
 * above it), the calls its code made (each opens here) and the requests it opened. Escape or
 * the close button closes it and gives focus back to what had it.
 */
export function CallTrajectory(props: CallTrajectoryProps) {
  const { snapshot, callId, inspect, onClose } = props;
  const t = useT();
  const times = useTimes();
  const headingId = useId();
  const heading = useRef<HTMLHeadingElement>(null);
  const opener = useRef<Element | null>(null);
  useEffect(() => {
    opener.current = document.activeElement;
    return () => {
      const back = opener.current;
      if (back instanceof HTMLElement && back.isConnected) back.focus();
    };
  }, []);
  useEffect(() => {
    heading.current?.focus();
  }, [callId]);
  const place = useMemo(() => findCall(snapshot.tree, callId), [snapshot.tree, callId]);
  const node = place?.node;
  const status = node === undefined ? undefined : statusOf(node);
  const parent = place?.ancestors[place.ancestors.length - 1];
  const duration =
    node?.outcome?.durationMs ?? between(node?.startedAt, node?.finishedAt) ?? undefined;
  return (
    <aside
      className="qc-panel"
      aria-labelledby={headingId}
      data-call-id={callId}
      onKeyDown={(event) => {
        if (event.key === 'Escape') {
          event.stopPropagation();
          onClose();
        }
      }}
    >
      <header className="qc-panel__header">
        <h2 id={headingId} ref={heading} tabIndex={-1} className="qc-trajectory__title">
          {t('trajectory.title', { tool: node?.toolName ?? '?' })}{' '}
          <code className="qc-trajectory__id">{callId}</code>
        </h2>
        <button type="button" className="qc-button" onClick={onClose}>
          {t('trajectory.close')}
        </button>
      </header>
      {node === undefined || place === undefined ? (
        <p role="alert" className="qc-trajectory__body">
          {t('trajectory.missing', { callId })}
        </p>
      ) : (
        <div className="qc-trajectory__body">
          <p className="qc-trajectory__status" data-status={status}>
            {t(`trajectory.status.${status ?? 'running'}`)}
            {node.outcome?.errorCode === undefined ? null : (
              <code className="qc-trajectory__code">{node.outcome.errorCode}</code>
            )}
          </p>

          <section aria-label={t('trajectory.position')}>
            <h3>{t('trajectory.position')}</h3>
            <dl className="qc-trajectory__facts">
              <Fact term={t('trajectory.turn')}>
                {t('trajectory.turnValue', { n: place.turnNumber })}
                {place.turn.prompt === '' ? null : (
                  <span className="qc-trajectory__prompt"> — {place.turn.prompt.slice(0, 80)}</span>
                )}
              </Fact>
              <Fact term={t('trajectory.step')}>
                {node.step === undefined ? '—' : String(node.step)}
              </Fact>
              <Fact term={t('trajectory.order')}>
                {parent === undefined
                  ? t('trajectory.orderRoot', { index: place.index, count: place.count })
                  : t('trajectory.orderNested', {
                      index: place.index,
                      count: place.count,
                      tool: parent.toolName,
                    })}
              </Fact>
              <Fact term={t('trajectory.entry')}>
                {node.caller === 'code' ? t('trajectory.entry.code') : t('trajectory.entry.direct')}
              </Fact>
              {parent === undefined ? null : (
                <Fact term={t('trajectory.parent')}>
                  <button
                    type="button"
                    className="qc-link"
                    onClick={() => inspect(parent.callId)}
                    data-call-link={parent.callId}
                  >
                    {parent.toolName} <code>{parent.callId}</code>
                  </button>
                </Fact>
              )}
            </dl>
          </section>

          <section aria-label={t('trajectory.timing')}>
            <h3>{t('trajectory.timing')}</h3>
            <dl className="qc-trajectory__facts">
              {node.preparingAt === undefined ? null : (
                <Fact term={t('trajectory.named')}>{times.time(node.preparingAt)}</Fact>
              )}
              <Fact term={t('trajectory.started')}>{times.time(node.startedAt) ?? '—'}</Fact>
              <Fact term={t('trajectory.ended')}>
                {times.time(node.finishedAt) ??
                  (node.phase === 'done' ? '—' : t('trajectory.notYet'))}
              </Fact>
              <Fact term={t('trajectory.duration')}>
                {duration === undefined ? '—' : times.duration(duration)}
              </Fact>
            </dl>
          </section>

          <section aria-label={t('trajectory.arguments')}>
            <h3>{t('trajectory.arguments')}</h3>
            {node.arguments === undefined ? (
              <p className="qc-trajectory__note">{t('trajectory.noArguments')}</p>
            ) : (
              <Raw value={node.arguments} label={t('trajectory.arguments')} />
            )}
          </section>

          <section aria-label={t('trajectory.result')}>
            <h3>{t('trajectory.result')}</h3>
            {node.outcome === undefined ? (
              <>
                <p className="qc-trajectory__note">{t('trajectory.noResult')}</p>
                {node.progress === '' ? null : (
                  <Raw value={node.progress} label={t('trajectory.progress')} />
                )}
                {node.progressTail === undefined ? null : (
                  <>
                    <p className="qc-trajectory__note">
                      {t('trajectory.progressTail', { bytes: node.progressOmittedBytes ?? 0 })}
                    </p>
                    <Raw value={node.progressTail} label={t('trajectory.progress')} />
                  </>
                )}
              </>
            ) : (
              <>
                <ContentView blocks={node.outcome.content} />
                {node.outcome.output === undefined ? null : (
                  <details className="qc-trajectory__details">
                    <summary>{t('trajectory.output')}</summary>
                    <Raw value={node.outcome.output} label={t('trajectory.output')} />
                  </details>
                )}
              </>
            )}
          </section>

          {node.subCalls.length === 0 ? null : (
            <section aria-label={t('trajectory.nested', { count: node.subCalls.length })}>
              <h3>{t('trajectory.nested', { count: node.subCalls.length })}</h3>
              <ol className="qc-trajectory__calls">
                {node.subCalls.map((sub) => (
                  <li key={sub.callId}>
                    <button
                      type="button"
                      className="qc-link"
                      onClick={() => inspect(sub.callId)}
                      data-call-link={sub.callId}
                    >
                      {callLabel(sub)}
                    </button>{' '}
                    <span className="qc-trajectory__note">
                      {t(`trajectory.status.${statusOf(sub)}`)}
                    </span>
                  </li>
                ))}
              </ol>
            </section>
          )}

          {node.requests.length === 0 ? null : (
            <section aria-label={t('trajectory.requests')}>
              <h3>{t('trajectory.requests')}</h3>
              <ul className="qc-trajectory__requests">
                {node.requests.map((request) => (
                  <RequestItem key={request.requestId} request={request} />
                ))}
              </ul>
            </section>
          )}
        </div>
      )}
    </aside>
  );
}
