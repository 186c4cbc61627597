import { useT } from '@qilin-agent/i18n';
import { terminalListModel } from '../models/terminal';
import type { ToolCallOwnerProps } from '../slots';
import { ToolRow } from './card';
import { Generic, hostOf, useModel } from './shared';

/** `terminal_list`: the session's terminals and persistent shells as two small tables. */
export function TerminalListView(props: ToolCallOwnerProps) {
  const t = useT();
  const model = useModel(props, terminalListModel);
  if (model.kind === 'generic') return <Generic view={props} model={model} />;
  const { terminals, shells } = model;
  const listed = terminals !== undefined && shells !== undefined;
  return (
    <ToolRow
      callId={props.callId}
      host={hostOf(props)}
      state={model.state}
      icon="terminal"
      title={t('tool.terminal_list.title')}
      summary={
        listed
          ? t('terminalList.counts', { terminals: terminals.length, shells: shells.length })
          : undefined
      }
    >
      {listed && (
        <>
          {terminals.length === 0 ? (
            <p className="qp-caption">{t('terminalList.noTerminals')}</p>
          ) : (
            <table className="qt-table">
              <caption>{t('terminalList.terminals')}</caption>
              <thead>
                <tr>
                  <th scope="col">{t('terminalList.id')}</th>
                  <th scope="col">{t('shell.command')}</th>
                  <th scope="col">{t('terminalList.state')}</th>
                </tr>
              </thead>
              <tbody>
                {terminals.map((terminal) => (
                  <tr key={terminal.terminalId}>
                    <td>
                      <code>{terminal.terminalId}</code>
                    </td>
                    <td>
                      <code>{terminal.command}</code>
                    </td>
                    <td>
                      {terminal.state === 'running'
                        ? t('job.running')
                        : terminal.exitCode === null
                          ? t('job.ended')
                          : t('job.exited', { code: terminal.exitCode })}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
          {shells.length === 0 ? (
            <p className="qp-caption">{t('terminalList.noShells')}</p>
          ) : (
            <table className="qt-table">
              <caption>{t('terminalList.shells')}</caption>
              <thead>
                <tr>
                  <th scope="col">{t('terminalList.shell')}</th>
                  <th scope="col">{t('terminalList.state')}</th>
                  <th scope="col">{t('terminalList.calls')}</th>
                  <th scope="col">{t('terminalList.lastCommand')}</th>
                </tr>
              </thead>
              <tbody>
                {shells.map((shell) => (
                  <tr key={`${shell.tool}/${shell.name}`}>
                    <td>
                      <code>{`${shell.tool} · ${shell.name}`}</code>
                    </td>
                    <td>
                      {t(
                        !shell.running
                          ? 'terminalList.shellStopped'
                          : shell.busy
                            ? 'terminalList.shellBusy'
                            : 'terminalList.shellIdle',
                      )}
                    </td>
                    <td>{shell.calls}</td>
                    <td>
                      <code>{shell.lastCommand}</code>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </>
      )}
    </ToolRow>
  );
}
