import { genericModel } from '../models/generic';
import type { ToolCallOwnerProps } from '../slots';
import { Generic, useModel } from './shared';

/** The view of a tool with no view of its own: the generic card, from the raw event fields. */
export function GenericToolView(props: ToolCallOwnerProps) {
  const model = useModel(props, genericModel);
  return <Generic view={props} model={model} />;
}
