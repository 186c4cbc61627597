import { grepModel } from '../models/search';
import type { ToolCallOwnerProps } from '../slots';
import { SearchCard } from './search';
import { Generic, useModel } from './shared';

/** `grep`: the search card. */
export function GrepView(props: ToolCallOwnerProps) {
  const model = useModel(props, grepModel);
  return model.kind === 'generic' ? (
    <Generic view={props} model={model} />
  ) : (
    <SearchCard view={props} model={model} icon="search" />
  );
}
