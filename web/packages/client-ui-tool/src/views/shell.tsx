import { useT } from '@qilin-agent/i18n';
import { TerminalOutput } from '@qilin-agent/ui-primitives';
import { shellModel } from '../models/shell';
import type { StartedToolCallViewProps, ToolCallOwnerProps } from '../slots';
import { PlainDetails, ToolRow } from './card';
import { Generic, PreparingRow, hostOf, useModel } from './shared';

/** The title of a shell tool's card. */
function shellTitle(toolName: string) {
  return toolName === 'pwsh' ? 'tool.pwsh.title' : 'tool.bash.title';
}

/**
 * `bash` and `pwsh`: while the arguments stream, the row alone; once dispatched, the terminal
 * card ([`ShellCard`]).
 */
export function ShellView(props: ToolCallOwnerProps) {
  const t = useT();
  if (props.phase === 'preparing') {
    return <PreparingRow view={props} icon="terminal" title={t(shellTitle(props.toolName))} />;
  }
  return <ShellCard {...props} />;
}

/** The terminal card of a dispatched `bash` or `pwsh` call: it reads the call's arguments. */
export function ShellCard(props: StartedToolCallViewProps) {
  const t = useT();
  const model = useModel(props, shellModel);
  if (model.kind === 'generic') return <Generic view={props} model={model} />;
  const title = t(shellTitle(props.toolName));
  const { body } = model;
  return (
    <ToolRow
      callId={props.callId}
      host={hostOf(props)}
      state={model.state}
      icon="terminal"
      title={title}
      summary={model.summary}
      suffix={
        model.background ? (
          <span className="qp-caption">{t('shell.background')}</span>
        ) : model.persistentShell === undefined ? undefined : (
          <span className="qp-caption">
            {t('shell.persistent', { name: model.persistentShell })}
          </span>
        )
      }
      capsule={model.capsule === undefined ? undefined : t(model.capsule)}
    >
      {body?.kind === 'terminal' && (
        <>
          <pre className="qt-command" tabIndex={0}>
            <span aria-hidden="true">$ </span>
            {body.command}
          </pre>
          {body.output !== undefined && (
            <TerminalOutput
              text={body.output}
              {...(body.gap === undefined ? {} : { gap: body.gap })}
              label={model.summary ?? title}
            />
          )}
        </>
      )}
      {body?.kind === 'receipt' && (
        <dl className="qt-receipt" aria-label={t('shell.startedInBackground')}>
          <dt>{t('shell.command')}</dt>
          <dd>
            <code>{body.command}</code>
          </dd>
          <dt>{t('shell.folder')}</dt>
          <dd>
            <code>{body.cwd}</code>
          </dd>
        </dl>
      )}
      {body?.kind === 'plain' && <PlainDetails body={body} label={title} />}
    </ToolRow>
  );
}
