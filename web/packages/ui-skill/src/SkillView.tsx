import {
  GenericCard,
  PreparingRow,
  ToolRow,
  PlainDetails,
  cardInput,
  type StartedToolCallViewProps,
  type ToolCallOwnerProps,
} from '@qilin-agent/client-ui-tool';
import { useT } from '@qilin-agent/i18n';
import { FileExcerpt } from '@qilin-agent/ui-primitives';
import { useMemo } from 'react';
import { skillModel } from './model';

/**
 * The `skill` tool's view: while the arguments stream, the row alone; once dispatched, which
 * skill and file the model read, and its text ([`SkillCard`]).
 */
export function SkillView(props: ToolCallOwnerProps) {
  const t = useT();
  if (props.phase === 'preparing') {
    return <PreparingRow view={props} icon="book" title={t('tool.skill.title')} />;
  }
  return <SkillCard {...props} />;
}

/** The card of a dispatched `skill` call: it reads the call's arguments. */
export function SkillCard(props: StartedToolCallViewProps) {
  const t = useT();
  const model = useMemo(() => skillModel(cardInput(props)), [props]);
  if (model.kind === 'generic')
    return <GenericCard model={model} callId={props.callId} host={props} />;
  const title = t('tool.skill.title');
  const summary =
    model.name === undefined
      ? undefined
      : model.file === undefined
        ? model.name
        : `${model.name} / ${model.file}`;
  return (
    <ToolRow
      callId={props.callId}
      host={props}
      state={model.state}
      icon="book"
      title={title}
      summary={summary}
      suffix={
        model.file === undefined && model.lines !== undefined ? (
          <span className="qp-caption">{t('skill.instructions')}</span>
        ) : undefined
      }
    >
      {model.lines !== undefined && (
        <FileExcerpt path={summary ?? title} lines={model.lines} firstLine={1} />
      )}
      {model.files !== undefined && model.files.length > 0 && (
        <section className="qt-block">
          <h4 className="qt-block__label">{t('skill.files', { count: model.files.length })}</h4>
          <ul className="qs-files">
            {model.files.map((file) => (
              <li key={file}>
                <code>{file}</code>
              </li>
            ))}
          </ul>
        </section>
      )}
      {model.body !== undefined && <PlainDetails body={model.body} label={title} />}
    </ToolRow>
  );
}
