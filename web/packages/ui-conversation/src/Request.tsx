import { useT, type Translate } from '@qilin-agent/i18n';
import { sessionHref } from '@qilin-agent/client-ui-tool';
import {
  requestOrigin,
  type Question,
  type RequestAnswer,
  type RequestNode,
} from '@qilin-agent/protocol';
import { useId, useState, type FormEvent } from 'react';

/**
 * Sends a person's reply (the server's answer route's body; the host adds who answers);
 * rejects with an error whose message says what went wrong.
 */
export type AnswerRequest = (requestId: string, reply: RequestAnswer) => Promise<void>;

/** How a resolved request ended, and who ended it. */
export function resolvedText(request: RequestNode, t: Translate): string {
  const who = request.resolvedBy ?? '';
  switch (request.resolution?.outcome) {
    case 'approved':
    case 'approved_for_session':
      return t('request.resolved.approved', { who });
    case 'denied':
      return t('request.resolved.denied', { who });
    case 'answered':
      return t('request.resolved.answered', { who });
    case 'dismissed':
      return t('request.resolved.dismissed', { who });
    default:
      return t('request.resolved.cancelled');
  }
}

/** The answers of a resolved question, as `question: answer` lines. */
function answeredLines(request: RequestNode): string[] {
  if (request.resolution?.outcome !== 'answered' || request.ask.kind !== 'question') {
    return [];
  }
  const answers = request.resolution.answers;
  return request.ask.questions.map((question) => {
    const answer = answers.find((candidate) => candidate.id === question.id);
    return `${question.question} → ${answer?.answer.join(', ') ?? '—'}`;
  });
}

/**
 * One request in place in the transcript, under the call that waits on it: while it is open,
 * the controls to answer it; once resolved (here, in another tab or by the runtime), what the
 * answer was. A request a child's call opened (it sits on the `agent` call that started the
 * child) names the child and links to its session; answering it here answers the child.
 */
export function RequestCard(props: {
  request: RequestNode;
  /** The waiting call's tool, named in an approval's title. */
  toolName: string;
  answer?: AnswerRequest;
}) {
  const { request, toolName, answer } = props;
  const t = useT();
  const [sending, setSending] = useState(false);
  const [failure, setFailure] = useState<string>();
  const headingId = useId();
  const open = request.resolution === undefined;
  const send = async (reply: RequestAnswer) => {
    if (answer === undefined) return;
    setSending(true);
    setFailure(undefined);
    try {
      await answer(request.requestId, reply);
    } catch (error) {
      setFailure(error instanceof Error ? error.message : String(error));
    } finally {
      setSending(false);
    }
  };
  const ask = request.ask;
  const origin = requestOrigin(request);
  const child = origin.childName ?? origin.childSessionId;
  const title =
    child !== undefined
      ? t(ask.kind === 'approval' ? 'request.approvalFrom' : 'request.questionFrom', { child })
      : ask.kind === 'approval'
        ? t('request.approval', { tool: toolName })
        : t('request.question');
  return (
    <section
      className="qc-request"
      data-request-id={request.requestId}
      data-request-state={open ? 'open' : (request.resolution?.outcome ?? 'resolved')}
      {...(child === undefined ? {} : { 'data-request-child': child })}
      aria-labelledby={headingId}
    >
      <h3 id={headingId} className="qc-request__title">
        {title}
      </h3>
      {origin.childSessionId !== undefined && (
        <a
          className="qc-request__child"
          href={sessionHref(origin.childSessionId)}
          data-child-session={origin.childSessionId}
        >
          {t('request.openChild', { child: child ?? origin.childSessionId })}
        </a>
      )}
      {ask.kind === 'approval' ? (
        <p className="qc-request__reason">
          {ask.presentation.action}
          {ask.presentation.remark === '' ? null : ` ${ask.presentation.remark}`}
          {ask.reason === '' ? null : ` — ${ask.reason}`}
        </p>
      ) : null}
      {open ? (
        ask.kind === 'approval' ? (
          <ApprovalForm disabled={sending || answer === undefined} send={send} />
        ) : (
          <QuestionForm
            questions={ask.questions}
            disabled={sending || answer === undefined}
            send={send}
          />
        )
      ) : (
        <div className="qc-request__resolved" role="status">
          <p>{resolvedText(request, t)}</p>
          {request.resolution?.outcome === 'denied' && request.resolution.reason ? (
            <p className="qc-request__why">{request.resolution.reason}</p>
          ) : null}
          {answeredLines(request).map((line) => (
            <p key={line} className="qc-request__answer">
              {line}
            </p>
          ))}
        </div>
      )}
      {sending ? <p role="status">{t('request.sending')}</p> : null}
      {failure === undefined ? null : (
        <p role="alert" className="qc-request__failure">
          {t('request.failed', { message: failure })}
        </p>
      )}
    </section>
  );
}

function ApprovalForm(props: { disabled: boolean; send: (reply: RequestAnswer) => void }) {
  const t = useT();
  const [reason, setReason] = useState('');
  const reasonId = useId();
  return (
    <div className="qc-request__form">
      <button
        type="button"
        className="qc-button qc-button--primary"
        disabled={props.disabled}
        onClick={() => props.send({ reply: 'approve' })}
      >
        {t('request.allow')}
      </button>
      <label htmlFor={reasonId} className="qc-request__label">
        {t('request.denyReason')}
      </label>
      <input
        id={reasonId}
        className="qc-input"
        value={reason}
        disabled={props.disabled}
        onChange={(event) => setReason(event.target.value)}
      />
      <button
        type="button"
        className="qc-button"
        disabled={props.disabled}
        onClick={() =>
          props.send(
            reason.trim() === '' ? { reply: 'deny' } : { reply: 'deny', reason: reason.trim() },
          )
        }
      >
        {t('request.deny')}
      </button>
    </div>
  );
}

function QuestionForm(props: {
  questions: readonly Question[];
  disabled: boolean;
  send: (reply: RequestAnswer) => void;
}) {
  const t = useT();
  const [picked, setPicked] = useState<Record<string, readonly string[]>>({});
  const [typed, setTyped] = useState<Record<string, string>>({});
  const formId = useId();
  const answers = props.questions.map((question) => {
    const chosen = picked[question.id] ?? [];
    const text = (typed[question.id] ?? '').trim();
    return { id: question.id, answer: text === '' ? [...chosen] : [...chosen, text] };
  });
  const complete = answers.every((answer) => answer.answer.length > 0);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (complete) props.send({ reply: 'answer', answers });
  };
  const toggle = (question: Question, option: string, on: boolean) =>
    setPicked((before) => {
      const current = before[question.id] ?? [];
      const next = question.multi_select
        ? on
          ? [...current, option]
          : current.filter((value) => value !== option)
        : [option];
      return { ...before, [question.id]: next };
    });
  return (
    <form className="qc-request__form qc-request__form--question" onSubmit={submit}>
      {props.questions.map((question, index) => {
        const name = `${formId}-${index}`;
        const options = question.options ?? [];
        return (
          <fieldset key={question.id} className="qc-question" disabled={props.disabled}>
            <legend>{question.question}</legend>
            {options.map((option) => (
              <label key={option} className="qc-question__option">
                <input
                  type={question.multi_select ? 'checkbox' : 'radio'}
                  name={name}
                  value={option}
                  checked={(picked[question.id] ?? []).includes(option)}
                  onChange={(event) => toggle(question, option, event.target.checked)}
                />
                {option}
              </label>
            ))}
            <label className="qc-question__free">
              {options.length === 0 ? t('request.freeText') : t('request.other')}
              <input
                className="qc-input"
                value={typed[question.id] ?? ''}
                onChange={(event) =>
                  setTyped((before) => ({ ...before, [question.id]: event.target.value }))
                }
              />
            </label>
          </fieldset>
        );
      })}
      <div className="qc-request__actions">
        <button
          type="submit"
          className="qc-button qc-button--primary"
          disabled={props.disabled || !complete}
        >
          {t('request.submit')}
        </button>
        <button
          type="button"
          className="qc-button"
          disabled={props.disabled}
          onClick={() => props.send({ reply: 'dismiss' })}
        >
          {t('request.dismiss')}
        </button>
      </div>
    </form>
  );
}
