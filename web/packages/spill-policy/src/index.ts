/**
 * The runtime's spill notice — written and recognised exactly as the runtime does it — under
 * the name the tool-call display's reference gives it; its one home is
 * `@qilin-agent/protocol/notice`.
 */
export {
  formatSpillNotice,
  hasSpillNotice,
  parseSpillNotice,
  type SpillNotice,
} from '@qilin-agent/protocol/notice';
