// The helpers every built-in view shares: the host part of a view's props, a memoised card model,
// the generic card.
import type { IconName } from '@qilin-agent/ui-primitives';
import { useMemo } from 'react';
import { cardInput } from '../models/common';
import type { GenericModel } from '../models/generic';
import type { PreparingToolCallViewProps, ToolCallHost, ToolCallOwnerProps } from '../slots';
import { GenericCard, ToolRow } from './card';

/** The host part of a view's props. */
export function hostOf(props: ToolCallOwnerProps): ToolCallHost {
  return {
    loadImage: props.loadImage,
    ...(props.cwd === undefined ? {} : { cwd: props.cwd }),
    ...(props.home === undefined ? {} : { home: props.home }),
    ...(props.openFile === undefined ? {} : { openFile: props.openFile }),
    ...(props.inspect === undefined ? {} : { inspect: props.inspect }),
  };
}

/** A card model of the view's props, computed once per change of the props. */
export function useModel<M>(
  props: ToolCallOwnerProps,
  build: (input: ReturnType<typeof cardInput>) => M,
): M {
  // The props object is rebuilt by the tree only when the call's data changed.
  // eslint-disable-next-line react-hooks/exhaustive-deps
  return useMemo(() => build(cardInput(props)), [props]);
}

/** The generic card of a view's call, for a call no dedicated card can show. */
export function Generic(props: { view: ToolCallOwnerProps; model: GenericModel }) {
  return <GenericCard model={props.model} callId={props.view.callId} host={hostOf(props.view)} />;
}

/**
 * The row of a call whose arguments are still streaming: its tool's icon and title, nothing
 * that depends on the arguments, and no details to expand.
 */
export function PreparingRow(props: {
  view: PreparingToolCallViewProps;
  icon: IconName;
  title: string;
}) {
  return (
    <ToolRow
      callId={props.view.callId}
      host={hostOf(props.view)}
      state="preparing"
      icon={props.icon}
      title={props.title}
    />
  );
}
