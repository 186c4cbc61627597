import { useT } from '@qilin-agent/i18n';
import { questionModel } from '../models/question';
import type { ToolCallOwnerProps } from '../slots';
import { PlainDetails, ToolRow } from './card';
import { Generic, hostOf, useModel } from './shared';

/** `question`: questions and answers paired by id; no invented answer. */
export function QuestionView(props: ToolCallOwnerProps) {
  const t = useT();
  const model = useModel(props, questionModel);
  if (model.kind === 'generic') return <Generic view={props} model={model} />;
  const summary =
    model.summary ??
    (model.count === undefined ? undefined : t('question.count', { count: model.count }));
  return (
    <ToolRow
      callId={props.callId}
      host={hostOf(props)}
      state={model.state}
      icon="question"
      title={t('tool.question.title')}
      summary={summary}
      suffix={
        model.verdict === undefined ? undefined : (
          <span className="qp-caption">{t(model.verdict)}</span>
        )
      }
    >
      {model.rows !== undefined && (
        <dl className="qt-questions">
          {model.rows.map((row) => (
            <div key={row.id} className="qt-questions__pair">
              <dt>{row.question}</dt>
              {row.options !== undefined && row.answer === undefined && (
                <dd className="qp-caption">{row.options.join(' / ')}</dd>
              )}
              {row.answer !== undefined && (
                <dd>
                  <span className="qp-caption">{t('question.answer')}: </span>
                  {row.answer.length === 0 ? t('question.noAnswer') : row.answer.join(', ')}
                </dd>
              )}
            </div>
          ))}
        </dl>
      )}
      {model.verdict !== undefined && <p className="qt-verdict">{t(model.verdict)}</p>}
      {model.body !== undefined && (
        <PlainDetails body={model.body} label={t('tool.question.title')} />
      )}
    </ToolRow>
  );
}
