import { globModel } from '../models/search';
import type { ToolCallViewProps } from '../slots';
import { SearchCard } from './search';
import { Generic, useModel } from './shared';

/** `glob`: the search card. */
export function GlobView(props: ToolCallViewProps) {
  const model = useModel(props, globModel);
  return model.kind === 'generic' ? (
    <Generic view={props} model={model} />
  ) : (
    <SearchCard view={props} model={model} icon="files" />
  );
}
