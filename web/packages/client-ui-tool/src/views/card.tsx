import { useT } from '@qilin-agent/i18n';
import { useSlotSharedOr } from '@qilin-agent/slots';
import {
  HighlightedCode,
  ImageGallery,
  RowAction,
  TerminalOutput,
  ToolRowChrome,
  type CallState,
  type IconName,
} from '@qilin-agent/ui-primitives';
import { Children, useId, useState, type ReactNode } from 'react';
import type { DeniedModel } from '../models/denied';
import type { GenericModel } from '../models/generic';
import type { PlainBody } from '../models/outcome';
import type { FileLines, ToolCallHost, ToolCallShared } from '../slots';
import { ReviewMark, useAllowCall, useReviewMark } from './review';

/** Hooks for a tree rendered with no conversation store: nothing streams, nothing precedes. */
const STILL_HOOKS: ToolCallShared = {
  useToolCallArgumentsPartial: () => '',
  usePreviousToolCall: () => undefined,
};

/** The shared tool hooks and host data (the store's, or still ones when the host gave none). */
export function useToolHooks(): ToolCallShared {
  return useSlotSharedOr('tool', STILL_HOOKS);
}

/** The props of [`ToolRow`]. */
export interface ToolRowProps {
  /** The call's id. */
  callId: string;
  /** The host's callbacks. */
  host: Pick<ToolCallHost, 'openFile' | 'inspect'>;
  /** The call's state. */
  state: CallState;
  /** The tool's icon. */
  icon: IconName;
  /** The row's title. */
  title: string;
  /** The row's summary. */
  summary?: string | undefined;
  /** Small facts after the summary. */
  suffix?: ReactNode;
  /** The capsule of a command that ended badly. */
  capsule?: string | undefined;
  /** A file the row opens through the host (the path as the call gave it). */
  openPath?: string | undefined;
  /** The lines of that file the call read or changed, given to the host with the path. */
  openLines?: FileLines | undefined;
  /**
   * True when the suffix and capsule name a state the details also show (where a job stands):
   * the row leaves them out while expanded, so the state is said once, in the details.
   */
  statusInDetails?: boolean;
  /** The card's own controls beside the row, before "Open" and "Inspect". */
  controls?: ReactNode;
  /** A line under the row, shown expanded or not (an error of one of the card's controls). */
  note?: ReactNode;
  /** The details; a card without them does not expand. */
  children?: ReactNode;
}

/**
 * The one row of a tool call, in every phase — preparing, started, ended — with the details it
 * expands to: the generic card and every built-in card are a `ToolRow`. Beside the row it
 * opens the call's file and the host's inspector, and shows how review judged a call it let
 * run. A row without details does not expand.
 */
export function ToolRow(props: ToolRowProps) {
  const t = useT();
  const detailsId = useId();
  const [expanded, setExpanded] = useState(false);
  const review = useReviewMark();
  const { callId, host, openPath, openLines, children } = props;
  const expandable = Children.toArray(children).length > 0;
  const rowStatus = !(props.statusInDetails === true && expandable && expanded);
  const actions: ReactNode[] = props.controls === undefined ? [] : [props.controls];
  if (openPath !== undefined && host.openFile !== undefined) {
    const open = host.openFile;
    actions.push(
      <RowAction
        key="open"
        label={t('row.openFile', { path: openPath })}
        onClick={() => (openLines === undefined ? open(openPath) : open(openPath, openLines))}
      >
        {t('row.open')}
      </RowAction>,
    );
  }
  if (host.inspect !== undefined) {
    const inspect = host.inspect;
    actions.push(
      <RowAction
        key="inspect"
        label={t('row.inspectCall', { callId })}
        onClick={() => inspect(callId)}
      >
        {t('row.inspect')}
      </RowAction>,
    );
  }
  return (
    <div className="qt-card" data-state={props.state}>
      <ToolRowChrome
        state={props.state}
        icon={props.icon}
        title={props.title}
        {...(props.summary === undefined ? {} : { summary: props.summary })}
        {...(props.suffix === undefined || !rowStatus ? {} : { suffix: props.suffix })}
        {...(props.capsule === undefined || !rowStatus ? {} : { capsule: props.capsule })}
        {...(expandable ? { expanded, onToggle: () => setExpanded(!expanded), detailsId } : {})}
        {...(review === undefined ? {} : { mark: <ReviewMark model={review} /> })}
        {...(actions.length === 0 ? {} : { actions })}
      />
      {props.note}
      {expandable && expanded && (
        <div id={detailsId} className="qt-card__details" role="group" aria-label={props.title}>
          {children}
        </div>
      )}
    </div>
  );
}

/**
 * A labelled block of text inside a card (the generic input and output); code in a known
 * `language` is highlighted once the highlighter chunk arrives.
 */
export function TextBlock(props: { label: string; text: string; language?: string }) {
  const t = useT();
  return (
    <section className="qt-block">
      <h4 className="qt-block__label">{props.label}</h4>
      <pre className="qt-block__text" tabIndex={0}>
        {props.text === '' ? (
          t('generic.empty')
        ) : props.language === undefined ? (
          props.text
        ) : (
          <HighlightedCode code={props.text} language={props.language} />
        )}
      </pre>
    </section>
  );
}

/** The flattened input and output of a call, with live output as a terminal. */
export function PlainDetails(props: { body: PlainBody; label: string }) {
  const t = useT();
  const { body } = props;
  return (
    <>
      {body.input !== undefined && <TextBlock label={t('generic.input')} text={body.input} />}
      {body.progress !== undefined && (
        <section className="qt-block">
          <h4 className="qt-block__label">{t('generic.progress')}</h4>
          <TerminalOutput
            text={body.progress}
            {...(body.progressGap === undefined ? {} : { gap: body.progressGap })}
            label={props.label}
          />
        </section>
      )}
      {body.output !== undefined && <TextBlock label={t('generic.output')} text={body.output} />}
    </>
  );
}

/** The generic card: "Tool call · name", a summary, the flattened input and output. */
export function GenericCard(props: { model: GenericModel; callId: string; host: ToolCallHost }) {
  const t = useT();
  const { model } = props;
  const title = `${t('row.toolCall')} · ${model.toolName}`;
  const hasDetails =
    model.input !== undefined ||
    model.output !== undefined ||
    model.progress !== undefined ||
    model.images !== undefined;
  return (
    <ToolRow
      callId={props.callId}
      host={props.host}
      state={model.state}
      icon="tool"
      title={title}
      summary={model.summary}
    >
      {hasDetails && (
        <>
          <PlainDetails
            body={{
              kind: 'plain',
              ...(model.input === undefined ? {} : { input: model.input }),
              ...(model.progress === undefined ? {} : { progress: model.progress }),
              ...(model.progressGap === undefined ? {} : { progressGap: model.progressGap }),
              ...(model.output === undefined ? {} : { output: model.output }),
            }}
            label={title}
          />
          {model.images !== undefined && (
            <ImageGallery
              images={model.images.map(({ description, note, ...image }) => ({
                ...image,
                description: t(description),
                ...(note === undefined ? {} : { note: t(note) }),
              }))}
              loadImage={props.host.loadImage}
            />
          )}
          {model.note !== undefined && <p className="qp-caption">{t(model.note)}</p>}
        </>
      )}
    </ToolRow>
  );
}

const REFUSAL_TITLES = {
  policy: 'denied.autoReview',
  reviewer: 'denied.reviewer',
  failed: 'denied.failed',
  timed_out: 'denied.timedOut',
} as const;

/**
 * The denial card: the call's identity, who refused it on the row ("Auto review", or that the
 * reviewer model denied it, with its risk, failed or timed out), one "not run" reason; for a
 * call the reviewer model refused, who judged it and, when the host can, "Allow this call".
 */
export function DeniedCard(props: { model: DeniedModel; callId: string; host: ToolCallHost }) {
  const t = useT();
  const { model } = props;
  const reason = model.reason ?? t('denied.fallbackReason');
  const allow = useAllowCall(
    props.callId,
    model.overridable ? props.host.allowCall : undefined,
    model.allowed,
  );
  const judged =
    model.reviewer === undefined
      ? undefined
      : model.refusal === 'reviewer'
        ? t('denied.judgedBy', {
            reviewer: model.reviewer,
            latency: model.latencyMs ?? 0,
          })
        : t('denied.notJudged', { reviewer: model.reviewer });
  return (
    <ToolRow
      callId={props.callId}
      host={props.host}
      state="denied"
      icon="shield"
      title={`${t('row.toolCall')} · ${model.toolName}`}
      summary={t(REFUSAL_TITLES[model.refusal])}
      {...(model.risk === undefined
        ? {}
        : { suffix: <span className="qt-denied__risk">{t(`review.risk.${model.risk}`)}</span> })}
      controls={allow.button}
      note={allow.error}
    >
      <p className="qt-denied">{t('denied.notRun', { reason })}</p>
      {judged === undefined ? null : <p className="qp-caption">{judged}</p>}
    </ToolRow>
  );
}
