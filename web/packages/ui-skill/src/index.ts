/**
 * The `skill` tool's view, owned by this package and registered through the tool-view slot:
 * the example of a business package adding its own card without touching the call tree.
 */
import { TOOL_VIEW_SLOT } from '@qilin-agent/client-ui-tool';
import type { SlotRegistry } from '@qilin-agent/slots';
import { SkillView } from './SkillView';

export { SkillView } from './SkillView';
export { skillModel, type SkillModel } from './model';

/** Registers the `skill` view; returns the function that removes it. */
export function registerSkillView(slots: SlotRegistry): () => void {
  return slots.inject(TOOL_VIEW_SLOT, () =>
    slots.register({ name: TOOL_VIEW_SLOT, key: 'skill' }, SkillView),
  );
}
