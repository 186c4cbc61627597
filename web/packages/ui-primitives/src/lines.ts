/** The lines of a text: a final line break ends the last line rather than starting another. */
export function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines.map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line));
}

/** Which lines a folded view shows: all of them, or a head and a tail with the middle hidden. */
export type Folded<T> =
  | { kind: 'all'; items: readonly T[] }
  | { kind: 'folded'; head: readonly T[]; hidden: number; tail: readonly T[] };

/**
 * Keeps `head` items and `tail` items of a long list and hides the middle. A list that
 * would hide fewer than two items is shown whole: hiding one line saves nothing.
 */
export function fold<T>(items: readonly T[], head: number, tail: number): Folded<T> {
  const hidden = items.length - head - tail;
  if (hidden < 2) return { kind: 'all', items };
  return {
    kind: 'folded',
    head: items.slice(0, head),
    hidden,
    tail: tail === 0 ? [] : items.slice(items.length - tail),
  };
}

/** Text without ANSI escape sequences (what a person copies from a terminal). */
export function stripAnsi(text: string): string {
  // CSI sequences (colours, cursor moves) and OSC sequences (titles, links).
  // eslint-disable-next-line no-control-regex
  return text.replace(/\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)/g, '');
}

/** A number of bytes for a person: `512 B`, `1.5 KB`, `47.7 MB`, `2.1 GB` (1 KB = 1024 B). */
export function formatBytes(bytes: number): string {
  const units = ['KB', 'MB', 'GB', 'TB'];
  if (bytes < 1024) return `${bytes} B`;
  let size = bytes / 1024;
  let unit = 0;
  while (size >= 1024 && unit < units.length - 1) {
    size /= 1024;
    unit += 1;
  }
  return `${size.toFixed(1)} ${units[unit]}`;
}
