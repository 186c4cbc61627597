/**
 * The runtime's spill notice, written and recognised exactly as `qilin_protocol::spill_notice`
 * and `parse_spill_notice` do it, from the same text (generated from the crate). This entry
 * needs nothing but the generated constants and runs in any browser; it is also published as
 * `@qilin-agent/spill-policy/notice`.
 *
 * The notice is one line, the last non-empty line of an output whose whole text was saved to
 * a file: `[qilin: output cut; all <bytes> bytes saved to <path> - read that file for the rest]`.
 * A text that matches proves nothing about where it came from: a view uses the match only to
 * choose a conservative display (the plain output, expandable), never to change the bytes.
 */

import {
  SPILL_NOTICE_CLOSE as CLOSE,
  SPILL_NOTICE_MIDDLE as MIDDLE,
  SPILL_NOTICE_OPEN as OPEN,
} from './generated';

/** The largest size the runtime can write: a 64-bit unsigned integer. */
const MAX_BYTES = 18_446_744_073_709_551_615n;

/** What a spill notice says. */
export interface SpillNotice {
  /** The file holding every byte of the output, as the runtime wrote it. */
  path: string;
  /** The whole output's size in bytes, as decimal digits (exact even past 2^53). */
  totalBytes: string;
}

/** White space as Rust's `char::is_whitespace` sees it (Unicode White_Space). */
const TRAILING_WHITE_SPACE =
  /[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+$/u;

/** Rust's `u64::from_str`: an optional `+`, then one or more ASCII digits, within 64 bits. */
function parseSize(text: string): string | undefined {
  const digits = text.startsWith('+') ? text.slice(1) : text;
  if (!/^[0-9]+$/.test(digits)) return undefined;
  const value = BigInt(digits);
  return value <= MAX_BYTES ? value.toString() : undefined;
}

/** The notice on the last non-empty line of `text`, or `undefined`. */
export function parseSpillNotice(text: string): SpillNotice | undefined {
  const trimmed = text.replace(TRAILING_WHITE_SPACE, '');
  if (trimmed === '') return undefined;
  const lastLine = trimmed.slice(trimmed.lastIndexOf('\n') + 1).replace(/\r$/, '');
  // Prefix and suffix must not overlap: Rust strips the suffix from what follows the prefix.
  if (lastLine.length < OPEN.length + CLOSE.length) return undefined;
  if (!lastLine.startsWith(OPEN) || !lastLine.endsWith(CLOSE)) return undefined;
  const rest = lastLine.slice(OPEN.length, lastLine.length - CLOSE.length);
  const split = rest.indexOf(MIDDLE);
  if (split < 0) return undefined;
  const totalBytes = parseSize(rest.slice(0, split));
  const path = rest.slice(split + MIDDLE.length);
  if (totalBytes === undefined || path === '') return undefined;
  return { path, totalBytes };
}

/** True when `text` ends with the runtime's spill notice. */
export function hasSpillNotice(text: string): boolean {
  return parseSpillNotice(text) !== undefined;
}

/** Writes the notice for an output of `totalBytes` bytes saved whole at `path`, as the runtime does. */
export function formatSpillNotice(path: string, totalBytes: number | bigint | string): string {
  return `${OPEN}${BigInt(totalBytes).toString()}${MIDDLE}${path}${CLOSE}`;
}
