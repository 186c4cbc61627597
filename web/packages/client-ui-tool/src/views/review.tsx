import { useT } from '@qilin-agent/i18n';
import { Icon } from '@qilin-agent/ui-primitives';
import { createContext, useContext, useState } from 'react';
import type { ReviewMarkModel } from '../models/review';

/**
 * The review mark of the call whose card renders inside: the tree provides it around each
 * call's view, and every card's row shows it.
 */
export const ReviewMarkContext = createContext<ReviewMarkModel | undefined>(undefined);

/** The review mark of the call being rendered, if it has one. */
export function useReviewMark(): ReviewMarkModel | undefined {
  return useContext(ReviewMarkContext);
}

/**
 * The quiet mark of a call review let run: "reviewed · low risk" (or that review failed or
 * timed out and a person was asked, or that the person's grant let it run); the reviewer's
 * reason is its tooltip and its accessible name.
 */
export function ReviewMark(props: { model: ReviewMarkModel }) {
  const t = useT();
  const { kind, reviewer = '', risk } = props.model;
  const reason = props.model.reason === '' ? t('review.noReason') : props.model.reason;
  const riskText = risk === undefined ? undefined : t(`review.risk.${risk}`);
  let text: string;
  let label: string;
  switch (kind) {
    case 'reviewed':
      text = t('review.mark.reviewed');
      label =
        riskText === undefined
          ? t('review.label.allowedNoRisk', { reviewer, reason })
          : t('review.label.allowed', { reviewer, risk: riskText, reason });
      break;
    case 'failed':
      text = t('review.mark.failed');
      label = t('review.label.failed', { reviewer, reason });
      break;
    case 'timed_out':
      text = t('review.mark.timedOut');
      label = t('review.label.timedOut', { reviewer, reason });
      break;
    case 'granted':
      text = t('review.mark.granted');
      label = t('review.label.granted');
      break;
  }
  return (
    <span
      className="qt-review-mark"
      data-review={kind}
      {...(risk === undefined ? {} : { 'data-risk': risk })}
      role="img"
      aria-label={label}
      title={label}
    >
      <Icon name="shield" className="qt-review-mark__icon" />
      <span>{text}</span>
      {riskText === undefined ? null : (
        <>
          <span aria-hidden="true">{' · '}</span>
          <span className="qt-review-mark__risk">{riskText}</span>
        </>
      )}
    </span>
  );
}

/** Where allowing a refused call stands. */
type AllowState =
  | { readonly kind: 'idle' }
  | { readonly kind: 'sending' }
  | { readonly kind: 'done' }
  | { readonly kind: 'failed'; readonly message: string };

/**
 * The "Allow this call" control of a refused call and its state: the button for the row, and
 * the error to show under it when the host could not allow the call. Once allowed (here, or by
 * a grant already in the log) the button reads "Allowed" and does nothing; it stays focusable.
 */
export function useAllowCall(
  callId: string,
  allowCall: ((callId: string) => Promise<void>) | undefined,
  allowed: boolean,
) {
  const t = useT();
  const [state, setState] = useState<AllowState>({ kind: 'idle' });
  if (allowCall === undefined) return { button: undefined, error: undefined };
  const done = allowed || state.kind === 'done';
  const sending = state.kind === 'sending';
  const allow = () => {
    if (done || sending) return;
    setState({ kind: 'sending' });
    allowCall(callId).then(
      () => setState({ kind: 'done' }),
      (error: unknown) =>
        setState({
          kind: 'failed',
          message: error instanceof Error ? error.message : String(error),
        }),
    );
  };
  const button = (
    <button
      key="allow"
      type="button"
      className="qp-action qt-allow"
      data-allowed={done ? 'true' : 'false'}
      aria-disabled={done || sending}
      aria-busy={sending}
      title={done ? undefined : t('denied.allowHint')}
      onClick={allow}
    >
      {done ? t('denied.allowed') : sending ? t('denied.allowing') : t('denied.allow')}
    </button>
  );
  const error =
    state.kind === 'failed' ? (
      <p className="qt-denied__error" role="alert">
        {t('denied.allowFailed', { message: state.message })}
      </p>
    ) : undefined;
  return { button, error };
}
