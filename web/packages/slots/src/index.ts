/**
 * A small keyed slot system: views registered by slot name and key (`register`), looked up
 * by key with a fallback (`Slot`, `useSlotView`), and shared hooks and host data injected into
 * every view (`SlotsProvider shared`, `useSlotShared`). No React node and no runtime service
 * passes through it: only plain data and functions.
 */
export {
  SlotError,
  SlotRegistry,
  type SlotEntry,
  type SlotName,
  type SlotPropsMap,
  type SlotView,
} from './registry';
export { checkShared, type SlotShared } from './shared';
export { Slot, SlotsProvider, useSlotRegistry, useSlotShared, useSlotView } from './react';
