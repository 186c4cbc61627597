import { useT } from '@qilin-agent/i18n';
import { writeModel } from '../models/diff';
import type { ToolCallOwnerProps } from '../slots';
import { DispatchedChange, PreparingContent } from './change';

/** `write`: the diff card (a preparing component apart from the dispatched one). */
export function WriteView(props: ToolCallOwnerProps) {
  const t = useT();
  if (props.phase === 'preparing')
    return <PreparingContent {...props} title={t('tool.write.title')} />;
  return <DispatchedChange view={props} build={writeModel} />;
}
