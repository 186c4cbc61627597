import { useT } from '@qilin-agent/i18n';
import { TerminalOutput } from '@qilin-agent/ui-primitives';
import { terminalModel } from '../models/terminal';
import type { StartedToolCallViewProps, ToolCallOwnerProps } from '../slots';
import { PlainDetails, ToolRow } from './card';
import { Generic, PreparingRow, hostOf, useModel } from './shared';

/** The title of a terminal tool's card. */
function terminalTitle(toolName: string) {
  return toolName === 'terminal_start' ? 'tool.terminal_start.title' : 'tool.terminal_send.title';
}

/**
 * `terminal_start` and `terminal_send`: while the arguments stream, the row alone; once
 * dispatched, the terminal card ([`TerminalCard`]).
 */
export function TerminalView(props: ToolCallOwnerProps) {
  const t = useT();
  if (props.phase === 'preparing') {
    return <PreparingRow view={props} icon="terminal" title={t(terminalTitle(props.toolName))} />;
  }
  return <TerminalCard {...props} />;
}

/** The terminal card of a program a person would type into: it reads the call's arguments. */
export function TerminalCard(props: StartedToolCallViewProps) {
  const t = useT();
  const model = useModel(props, terminalModel);
  if (model.kind === 'generic') return <Generic view={props} model={model} />;
  const title = t(terminalTitle(props.toolName));
  const summary =
    model.summary === undefined
      ? undefined
      : typeof model.summary === 'string'
        ? model.summary
        : t(model.summary);
  const { body } = model;
  return (
    <ToolRow
      callId={props.callId}
      host={hostOf(props)}
      state={model.state}
      icon="terminal"
      title={title}
      summary={summary}
      suffix={
        model.terminalId === undefined ? undefined : (
          <span className="qp-caption">{model.terminalId}</span>
        )
      }
      capsule={model.capsule === undefined ? undefined : t(model.capsule)}
    >
      {body?.kind === 'terminal' && (
        <>
          {body.command !== undefined && (
            <pre className="qt-command" tabIndex={0}>
              <span aria-hidden="true">$ </span>
              {body.command}
            </pre>
          )}
          {body.typed !== undefined && (
            <pre className="qt-command" tabIndex={0} aria-label={t('terminal.typed')}>
              <span aria-hidden="true">› </span>
              {body.typed}
            </pre>
          )}
          <TerminalOutput
            text={body.output}
            {...(body.gap === undefined ? {} : { gap: body.gap })}
            label={summary ?? title}
          />
          {body.waitMissed && <p className="qp-caption">{t('terminal.waitMissed')}</p>}
        </>
      )}
      {body?.kind === 'plain' && <PlainDetails body={body} label={title} />}
    </ToolRow>
  );
}
