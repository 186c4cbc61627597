import { useT } from '@qilin-agent/i18n';
import { interruptModel } from '../models/job';
import type { ToolCallOwnerProps } from '../slots';
import { ToolRow } from './card';
import { Generic, hostOf, useModel } from './shared';

/** `job_kill` and `terminal_kill`: the receipt of an interrupt request, and nothing more. */
export function InterruptView(props: ToolCallOwnerProps) {
  const t = useT();
  const model = useModel(props, interruptModel);
  if (model.kind === 'generic') return <Generic view={props} model={model} />;
  return (
    <ToolRow
      callId={props.callId}
      host={hostOf(props)}
      state={model.state}
      icon="terminal"
      title={t(
        props.toolName === 'terminal_kill' ? 'tool.terminal_kill.title' : 'tool.job_kill.title',
      )}
      summary={model.target}
    >
      {model.confirmation !== undefined && <p className="qt-verdict">{t(model.confirmation)}</p>}
    </ToolRow>
  );
}
