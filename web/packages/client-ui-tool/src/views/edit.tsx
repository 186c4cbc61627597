import { useT } from '@qilin-agent/i18n';
import { editModel } from '../models/diff';
import type { ToolCallOwnerProps } from '../slots';
import { DispatchedChange, PreparingContent } from './change';

/** `edit`: the diff card (a preparing component apart from the dispatched one). */
export function EditView(props: ToolCallOwnerProps) {
  const t = useT();
  if (props.phase === 'preparing')
    return <PreparingContent {...props} title={t('tool.edit.title')} />;
  return <DispatchedChange view={props} build={editModel} />;
}
