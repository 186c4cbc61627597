import { genericModel } from '../models/generic';
import type { ToolCallViewProps } from '../slots';
import { Generic, useModel } from './shared';

/** The view for a tool with no view of its own: the generic card, with the tool's recorded header. */
export function GenericToolView(props: ToolCallViewProps) {
  const model = useModel(props, (input) =>
    genericModel(input, props.phase === 'preparing' ? undefined : props.start.presentation),
  );
  return <Generic view={props} model={model} />;
}
