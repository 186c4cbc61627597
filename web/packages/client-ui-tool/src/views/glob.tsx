import { globModel } from '../models/search';
import type { ToolCallOwnerProps } from '../slots';
import { SearchCard } from './search';
import { Generic, useModel } from './shared';

/** `glob`: the search card. */
export function GlobView(props: ToolCallOwnerProps) {
  const model = useModel(props, globModel);
  return model.kind === 'generic' ? (
    <Generic view={props} model={model} />
  ) : (
    <SearchCard view={props} model={model} icon="files" />
  );
}
