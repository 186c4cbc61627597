/**
 * The spill policy's notice: written and recognised exactly as the runtime does it
 * (`qilin_protocol::spill_notice` and `parse_spill_notice`). The recogniser alone is the
 * browser-safe entry `@qilin-agent/spill-policy/notice`.
 */
export { hasSpillNotice, parseSpillNotice, type SpillNotice } from './notice';

/** Writes the notice for an output of `totalBytes` bytes saved whole at `path`, as the runtime does. */
export function formatSpillNotice(path: string, totalBytes: number | bigint | string): string {
  return `[qilin: output cut; all ${BigInt(totalBytes).toString()} bytes saved to ${path} - read that file for the rest]`;
}
