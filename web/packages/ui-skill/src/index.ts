/**
 * The `skill` tool's view, owned by this package and registered through the tool-view slot:
 * the example of a business package adding its own card without touching the call tree.
 */
import { TOOL_VIEW_SLOT } from '@qilin-agent/client-ui-tool';
import type { SlotContext } from '@qilin-agent/slots';
import { SkillView } from './SkillView';

export { SkillCard, SkillView } from './SkillView';
export { skillModel, type SkillModel } from './model';

/** Registers the `skill` view in `ctx.slots`; returns the function that removes it. */
export function registerSkillView(ctx: SlotContext): () => void {
  return ctx.slots.inject(TOOL_VIEW_SLOT, () =>
    ctx.slots.register({ name: TOOL_VIEW_SLOT, key: 'skill' }, SkillView),
  );
}
