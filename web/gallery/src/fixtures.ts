// The recorded logs, bundled into the page as text.
const recorded = import.meta.glob('../../fixtures/*.jsonl', {
  query: '?raw',
  import: 'default',
  eager: true,
});
const malformed = import.meta.glob('../../fixtures/malformed/*.jsonl', {
  query: '?raw',
  import: 'default',
  eager: true,
});

function named(files: Record<string, unknown>, prefix: string): [string, string][] {
  return Object.entries(files)
    .map(([path, text]): [string, string] => [
      prefix + (path.split('/').pop() ?? path).replace(/\.jsonl$/, ''),
      String(text),
    ])
    .sort(([a], [b]) => a.localeCompare(b));
}

/** Every log: the recorded ones, then the hand-written malformed ones. */
export const FIXTURES: readonly [string, string][] = [
  ...named(recorded, ''),
  ...named(malformed, 'malformed/'),
];
