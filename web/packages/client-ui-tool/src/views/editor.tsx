import { editorModel } from '../models/diff';
import type { ToolCallOwnerProps } from '../slots';
import { DiffCard } from './change';
import { ReadCard } from './read';
import { Generic, useModel } from './shared';

/** `str_replace_editor`: `view` as the read card, changes as the diff card. */
export function EditorView(props: ToolCallOwnerProps) {
  const model = useModel(props, editorModel);
  if (model.kind === 'generic') return <Generic view={props} model={model} />;
  if (model.kind === 'read') return <ReadCard view={props} model={model} />;
  return <DiffCard view={props} model={model} />;
}
