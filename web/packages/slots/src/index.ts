/**
 * A small keyed slot system: views registered by slot name and key (`register`), looked up
 * by key with a fallback (`Slot`, `useSlotView`), and shared hooks and host data injected into
 * every view (`SlotsProvider shared`, `useSlotShared`). No React node and no runtime service
 * passes through it: only plain data and functions.
 */
export {
  SlotError,
  SlotRegistry,
  type SlotContext,
  type SlotEntry,
  type SlotName,
  type SlotView,
} from './registry';
export { checkShared } from './shared';
export {
  Slot,
  SlotsProvider,
  useSlotRegistry,
  useSlotShared,
  useSlotSharedOr,
  useSlotView,
} from './react';

/**
 * The props each slot's views take, by slot name. A package that owns a slot declares it by
 * augmenting this interface:
 *
 * ```ts
 * declare module '@qilin-agent/slots' {
 *   interface SlotPropsMap { 'tool.call.toolview': ToolCallOwnerProps }
 * }
 * ```
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface SlotPropsMap {}

/**
 * What every view of a slot may use besides its props: shared hooks and host data, in
 * groups. A package declares its group by augmenting this interface:
 *
 * ```ts
 * declare module '@qilin-agent/slots' {
 *   interface SlotShared { tool: ToolCallShared }
 * }
 * ```
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface SlotShared {}
