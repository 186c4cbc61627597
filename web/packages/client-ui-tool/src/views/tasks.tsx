// The team's task cards — `task_create`, `task_update`, `task_list` — and the parts they share:
// a task's status badge and its record.
import { useT } from '@qilin-agent/i18n';
import { useMemo, type ReactNode } from 'react';
import { cardInput } from '../models/common';
import {
  taskCreateModel,
  taskDot,
  taskListModel,
  taskUpdateModel,
  type TaskListRow,
  type TaskRow,
  type TaskState,
} from '../models/tasks';
import type { ToolCallOwnerProps } from '../slots';
import { PlainDetails, TextBlock, ToolRow, useToolHooks } from './card';
import { RecordedTime } from './sessionParts';
import { Generic, hostOf, useModel } from './shared';

/** A task's status: a dot in its static colour and the word. */
export function TaskStatusBadge(props: { status: TaskState }) {
  const t = useT();
  return (
    <span className="qt-task-status" data-status={props.status}>
      <span className={`qp-dot qp-dot--${taskDot(props.status)}`} aria-hidden="true" />
      {t(`tasks.status.${props.status}`)}
    </span>
  );
}

function Entry(props: { label: string; children: ReactNode }) {
  return (
    <>
      <dt>{props.label}</dt>
      <dd>{props.children}</dd>
    </>
  );
}

/** Who a task is with, or that it is with nobody. */
function Assignee(props: { name: string | undefined }) {
  const t = useT();
  return props.name === undefined ? (
    <span className="qp-caption">{t('tasks.unassigned')}</span>
  ) : (
    <span className="qt-task__assignee">{props.name}</span>
  );
}

/** The ids of the tasks a task waits for. */
function Blockers(props: { ids: readonly string[] }) {
  const t = useT();
  return <>{t('tasks.blockers', { ids: props.ids.join(', #') })}</>;
}

/** A task as a call recorded it: status, assignee, what it waits for, description and notes. */
function TaskDetails(props: { task: TaskRow }) {
  const t = useT();
  const { task } = props;
  return (
    <div className="qt-task" data-task={task.id}>
      <dl className="qt-receipt" aria-label={t('tasks.record', { id: task.id, title: task.title })}>
        <Entry label={t('tasks.statusLabel')}>
          <TaskStatusBadge status={task.status} />
        </Entry>
        <Entry label={t('tasks.assignee')}>
          <Assignee name={task.assignee} />
        </Entry>
        {task.blockedBy.length > 0 && (
          <Entry label={t('tasks.blockedBy')}>
            <Blockers ids={task.blockedBy} />
          </Entry>
        )}
        <Entry label={t('tasks.createdBy')}>
          {task.createdBy} · <RecordedTime at={task.createdAt} />
        </Entry>
      </dl>
      {task.description !== undefined && (
        <TextBlock label={t('tasks.description')} text={task.description} />
      )}
      {task.notes.length > 0 && (
        <section className="qt-block">
          <h4 className="qt-block__label">{t('tasks.notes')}</h4>
          <ol className="qt-task__notes">
            {task.notes.map((note, index) => (
              <li key={index} className="qt-task__note">
                <span className="qt-task__note-by">{note.by}</span>{' '}
                <RecordedTime at={note.at} className="qp-caption" />
                <p className="qt-task__note-text">{note.text}</p>
              </li>
            ))}
          </ol>
        </section>
      )}
    </div>
  );
}

/** `task_create`: the title, the new task's id and assignee; the task once created. */
export function TaskCreateView(props: ToolCallOwnerProps) {
  const t = useT();
  const model = useModel(props, taskCreateModel);
  if (model.kind === 'generic') return <Generic view={props} model={model} />;
  const title = t('tool.task_create.title');
  const assignee = model.task?.assignee ?? model.assignee;
  return (
    <ToolRow
      callId={props.callId}
      host={hostOf(props)}
      state={model.state}
      icon="checklist"
      title={title}
      summary={model.title}
      suffix={
        model.task === undefined && assignee === undefined
          ? undefined
          : [model.task === undefined ? undefined : `#${model.task.id}`, assignee]
              .filter((part) => part !== undefined)
              .join(' · ')
      }
    >
      {model.task !== undefined && <TaskDetails task={model.task} />}
      {model.body !== undefined && <PlainDetails body={model.body} label={title} />}
    </ToolRow>
  );
}

/** `task_update`: the task's status as before → after; the changes, the note, the task now. */
export function TaskUpdateView(props: ToolCallOwnerProps) {
  const t = useT();
  const model = useModel(props, taskUpdateModel);
  if (model.kind === 'generic') return <Generic view={props} model={model} />;
  const title = t('tool.task_update.title');
  const summary =
    model.task !== undefined
      ? `#${model.task.id} ${model.task.title}`
      : model.id === undefined
        ? undefined
        : t('tasks.id', { id: model.id });
  const suffix =
    model.status !== undefined
      ? t('tasks.update.change', {
          before: t(`tasks.status.${model.status.before}`),
          after: t(`tasks.status.${model.status.after}`),
        })
      : model.suffix !== undefined
        ? t(model.suffix)
        : model.askedStatus !== undefined
          ? `→ ${t(`tasks.status.${model.askedStatus}`)}`
          : undefined;
  return (
    <ToolRow
      callId={props.callId}
      host={hostOf(props)}
      state={model.state}
      icon="checklist"
      title={title}
      summary={summary}
      suffix={suffix}
    >
      {model.task !== undefined && (model.status !== undefined || model.assignee !== undefined) && (
        <dl
          className="qt-receipt qt-task-changes"
          aria-label={t('tasks.update.changes', { id: model.task.id })}
        >
          {model.status !== undefined && (
            <Entry label={t('tasks.statusLabel')}>
              <span className="qt-task-change" data-field="status">
                <TaskStatusBadge status={model.status.before} />
                <span aria-hidden="true"> → </span>
                <TaskStatusBadge status={model.status.after} />
              </span>
            </Entry>
          )}
          {model.assignee !== undefined && (
            <Entry label={t('tasks.assignee')}>
              <span className="qt-task-change" data-field="assignee">
                <Assignee name={model.assignee.before} />
                <span aria-hidden="true"> → </span>
                <Assignee name={model.assignee.after} />
              </span>
            </Entry>
          )}
        </dl>
      )}
      {model.note !== undefined && model.body === undefined && (
        <TextBlock label={t('tasks.update.note')} text={model.note} />
      )}
      {model.task !== undefined && <TaskDetails task={model.task} />}
      {model.body !== undefined && <PlainDetails body={model.body} label={title} />}
    </ToolRow>
  );
}

/** How a listed task differs from the previous list: a tag, and what it was. */
function TaskMarks(props: { row: TaskListRow }) {
  const t = useT();
  const { row } = props;
  if (row.mark === undefined) return null;
  return (
    <span className="qt-task-marks">
      <span
        className={`qt-tag${row.mark === 'added' || row.mark === 'done' ? ' qt-tag--added' : ''}${
          row.mark === 'unchanged' ? ' qt-tag--quiet' : ''
        }`}
        data-mark={row.mark}
      >
        {t(`tasks.mark.${row.mark}`)}
      </span>
      {row.previousStatus !== undefined && (
        <span className="qp-caption">
          {' '}
          {t('tasks.mark.wasStatus', { from: t(`tasks.status.${row.previousStatus}`) })}
        </span>
      )}
      {row.previousAssignee !== undefined && (
        <span className="qp-caption">
          {row.previousStatus === undefined ? ' ' : ' · '}
          {t('tasks.mark.wasAssignee', {
            from: row.previousAssignee ?? t('tasks.unassigned'),
          })}
        </span>
      )}
    </span>
  );
}

/** `task_list`: the team's tasks as a table, compared with the previous list of the session. */
export function TaskListView(props: ToolCallOwnerProps) {
  const t = useT();
  const { usePreviousToolCall } = useToolHooks();
  const previous = usePreviousToolCall(props.callId, props.toolName);
  const previousOutput = previous?.outcome?.output;
  const model = useMemo(
    () => taskListModel(cardInput(props), previousOutput),
    [props, previousOutput],
  );
  if (model.kind === 'generic') return <Generic view={props} model={model} />;
  const title = t('tool.task_list.title');
  return (
    <ToolRow
      callId={props.callId}
      host={hostOf(props)}
      state={model.state}
      icon="checklist"
      title={title}
      summary={model.summary === undefined ? undefined : t(model.summary)}
      suffix={model.suffix === undefined ? undefined : t(model.suffix)}
    >
      {model.rows !== undefined &&
        (model.rows.length === 0 ? (
          <p className="qp-caption">{t('tasks.list.none')}</p>
        ) : (
          <div className="qt-table-scroll">
            <table className="qt-table qt-task-table">
              <caption>{t('tasks.list.caption')}</caption>
              <thead>
                <tr>
                  <th scope="col">{t('tasks.idLabel')}</th>
                  <th scope="col">{t('tasks.title')}</th>
                  <th scope="col">{t('tasks.statusLabel')}</th>
                  <th scope="col">{t('tasks.assignee')}</th>
                  <th scope="col">{t('tasks.blockedBy')}</th>
                  {model.compared === true && <th scope="col">{t('tasks.list.sinceLabel')}</th>}
                </tr>
              </thead>
              <tbody>
                {model.rows.map((row) => (
                  <tr key={row.id} data-task={row.id} data-mark={row.mark}>
                    <td>{row.id}</td>
                    <td className="qt-task-table__title">{row.title}</td>
                    <td>
                      <TaskStatusBadge status={row.status} />
                    </td>
                    <td>
                      <Assignee name={row.assignee} />
                    </td>
                    <td>{row.blockedBy.length === 0 ? '' : <Blockers ids={row.blockedBy} />}</td>
                    {model.compared === true && (
                      <td>
                        <TaskMarks row={row} />
                      </td>
                    )}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ))}
      {model.body !== undefined && <PlainDetails body={model.body} label={title} />}
    </ToolRow>
  );
}
