import { useT } from '@qilin-agent/i18n';
import { useMemo } from 'react';
import { cardInput } from '../models/common';
import { todoModel } from '../models/todo';
import type { ToolCallOwnerProps } from '../slots';
import { PlainDetails, ToolRow, useToolHooks } from './card';
import { Generic, hostOf } from './shared';

/** `todo_write`: the list, compared with the previous recorded write of the session. */
export function TodoView(props: ToolCallOwnerProps) {
  const t = useT();
  const { usePreviousToolCall } = useToolHooks();
  const previous = usePreviousToolCall(props.callId, props.toolName);
  const previousArguments = previous?.arguments;
  const model = useMemo(
    () => todoModel(cardInput(props), previousArguments),
    [props, previousArguments],
  );
  if (model.kind === 'generic') return <Generic view={props} model={model} />;
  return (
    <ToolRow
      callId={props.callId}
      host={hostOf(props)}
      state={model.state}
      icon="checklist"
      title={t('tool.todo_write.title')}
      summary={model.summary === undefined ? undefined : t(model.summary)}
    >
      {model.rows !== undefined && (
        <ul className="qt-todo">
          {model.rows.map((row) => (
            <li key={row.id} className={`qt-todo__item qt-todo__item--${row.status}`}>
              <span className="qt-todo__box" aria-hidden="true" />
              <span className="qt-todo__content">{row.content}</span>
              <span className="qp-caption">{t(`todo.status.${row.status}`)}</span>
              {row.added && <span className="qt-tag qt-tag--added">{t('todo.added')}</span>}
              {row.previousStatus !== undefined && (
                <span className="qt-tag">
                  {t('todo.changed', { from: t(`todo.status.${row.previousStatus}`) })}
                </span>
              )}
              {row.moved && <span className="qt-tag">{t('todo.moved')}</span>}
              {!row.added &&
                row.previousStatus === undefined &&
                !row.moved &&
                previous !== undefined && (
                  <span className="qt-tag qt-tag--quiet">{t('todo.unchanged')}</span>
                )}
            </li>
          ))}
          {model.removed?.map((item) => (
            <li key={`removed-${item.id}`} className="qt-todo__item qt-todo__item--removed">
              <span className="qt-todo__box" aria-hidden="true" />
              <del className="qt-todo__content">{item.content}</del>
              <span className="qt-tag qt-tag--removed">{t('todo.removed')}</span>
            </li>
          ))}
        </ul>
      )}
      {model.body !== undefined && (
        <PlainDetails body={model.body} label={t('tool.todo_write.title')} />
      )}
    </ToolRow>
  );
}
