/**
 * The browser-safe spill notice recogniser under the name the tool-call display's reference
 * gives it; its one home is `@qilin-agent/protocol/notice`.
 */
export { hasSpillNotice, parseSpillNotice, type SpillNotice } from '@qilin-agent/protocol/notice';
