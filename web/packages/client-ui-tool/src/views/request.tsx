import { useT } from '@qilin-agent/i18n';
import { useMemo } from 'react';
import { requestNotes, type RequestNote } from '../models/request';
import type { ToolCallRequestsProps } from '../slots';

function Note(props: { note: RequestNote }) {
  const t = useT();
  const { note } = props;
  return (
    <div
      className="qt-request"
      data-waiting={note.waiting ? 'true' : 'false'}
      {...(note.waiting ? { role: 'status' } : {})}
    >
      <p className="qt-request__line">
        <span className="qt-request__headline">{t(note.headline)}</span>
        {note.reason !== undefined && (
          <>
            <span aria-hidden="true">{' · '}</span>
            <span className="qt-request__reason">{note.reason}</span>
          </>
        )}
      </p>
      {note.questions !== undefined && note.questions.length > 0 && (
        <ol className="qt-request__questions">
          {note.questions.map((question) => (
            <li key={question.id}>
              <span>{question.question}</span>
              {question.options !== undefined && (
                <span className="qp-caption">
                  {' '}
                  {t('request.options', { options: question.options.join(' / ') })}
                  {question.multiSelect && ` · ${t('request.multiSelect')}`}
                </span>
              )}
            </li>
          ))}
        </ol>
      )}
    </div>
  );
}

/**
 * The notes under a call's card about its requests: the wait for a person (an approval and
 * its reason, or the questions asked), announced as a status, then how each approval ended.
 * Answering belongs to the conversation view; this only shows the state.
 */
export function RequestNotes(props: Pick<ToolCallRequestsProps, 'requests' | 'pending'>) {
  const { requests, pending } = props;
  const notes = useMemo(() => requestNotes(requests, pending), [requests, pending]);
  if (notes.length === 0) return null;
  return (
    <div className="qt-requests">
      {notes.map((note) => (
        <Note key={note.requestId} note={note} />
      ))}
    </div>
  );
}
