import { useT } from '@qilin-agent/i18n';
import { parsePatch } from 'diff';
import { useState } from 'react';
import { splitLines } from './lines';

/** One line of a diff, with its numbers in the old and new file when they are known. */
export interface DiffLine {
  /** Kept, added, removed, or a note such as "\ No newline at end of file". */
  kind: 'context' | 'added' | 'removed' | 'note';
  /** The line's text, without its sign. */
  text: string;
  /** Its number in the old file. */
  oldNumber?: number;
  /** Its number in the new file. */
  newNumber?: number;
}

/** One hunk: a run of lines of the diff. */
export interface DiffHunk {
  /** The lines in order. */
  lines: DiffLine[];
}

/** How much a change added and removed: exact counts, or only how many lines were written. */
export type DiffStatsValue =
  { kind: 'exact'; added: number; removed: number } | { kind: 'coarse'; lines: number };

/** Lines from hunk text (` `, `+`, `-`, `\` prefixes) numbered from the given starts. */
export function numberHunkLines(
  raw: readonly string[],
  oldStart: number | undefined,
  newStart: number | undefined,
): DiffLine[] {
  let oldNumber = oldStart;
  let newNumber = newStart;
  return raw.map((line): DiffLine => {
    const sign = line[0];
    const text = line.slice(1);
    if (sign === '+') {
      const numbered: DiffLine = {
        kind: 'added',
        text,
        ...(newNumber === undefined ? {} : { newNumber }),
      };
      if (newNumber !== undefined) newNumber += 1;
      return numbered;
    }
    if (sign === '-') {
      const numbered: DiffLine = {
        kind: 'removed',
        text,
        ...(oldNumber === undefined ? {} : { oldNumber }),
      };
      if (oldNumber !== undefined) oldNumber += 1;
      return numbered;
    }
    if (sign === '\\') return { kind: 'note', text: line.slice(2) };
    const numbered: DiffLine = {
      kind: 'context',
      text,
      ...(oldNumber === undefined ? {} : { oldNumber }),
      ...(newNumber === undefined ? {} : { newNumber }),
    };
    if (oldNumber !== undefined) oldNumber += 1;
    if (newNumber !== undefined) newNumber += 1;
    return numbered;
  });
}

/**
 * The hunks of a unified diff of one file (parsed by jsdiff), numbered; `undefined` when the
 * text is not a unified diff.
 */
export function parseUnifiedDiff(text: string): DiffHunk[] | undefined {
  let patches;
  try {
    patches = parsePatch(text);
  } catch {
    return undefined;
  }
  const [patch] = patches;
  if (patches.length !== 1 || patch === undefined || patch.hunks.length === 0) return undefined;
  return patch.hunks.map((hunk) => ({
    lines: numberHunkLines(hunk.lines, hunk.oldStart, hunk.newStart),
  }));
}

/** A whole text as added lines, numbered from 1: a new file. */
export function addedFile(text: string): DiffHunk[] {
  return [
    {
      lines: splitLines(text).map((line, index) => ({
        kind: 'added',
        text: line,
        newNumber: index + 1,
      })),
    },
  ];
}

/** The counts of a diff's hunks. */
export function countHunks(hunks: readonly DiffHunk[]): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const hunk of hunks) {
    for (const line of hunk.lines) {
      if (line.kind === 'added') added += 1;
      if (line.kind === 'removed') removed += 1;
    }
  }
  return { added, removed };
}

/** `+3 −1`, or `~12` when only the lines written are known; the same in a row and a card. */
export function DiffStats(props: { stats: DiffStatsValue }) {
  const t = useT();
  const { stats } = props;
  if (stats.kind === 'coarse') {
    return (
      <span className="qp-stats" role="img" aria-label={t('diff.coarse', { count: stats.lines })}>
        <span className="qp-stats__coarse">~{stats.lines}</span>
      </span>
    );
  }
  return (
    <span
      className="qp-stats"
      role="img"
      aria-label={t('diff.stats', { added: stats.added, removed: stats.removed })}
    >
      <span className="qp-stats__added">+{stats.added}</span>{' '}
      <span className="qp-stats__removed">−{stats.removed}</span>
    </span>
  );
}

/** The props of [`DiffView`]. */
export interface DiffViewProps {
  /** The file, as the summary shows it. */
  path: string;
  /** The hunks. */
  hunks: readonly DiffHunk[];
  /** The counts shown at the card's foot. */
  stats: DiffStatsValue;
  /** Show line numbers (false when the numbers in the file are not known). */
  lineNumbers?: boolean;
  /** Rows shown before folding, the file's title row included (default 9). */
  foldAfter?: number;
  /** A note beside the title (such as "new file"). */
  note?: string;
}

const SIGNS: Record<DiffLine['kind'], string> = {
  added: '+',
  removed: '−',
  context: ' ',
  note: '\\',
};

type Row = { gap: true } | { gap: false; line: DiffLine };

/**
 * A unified diff: the file's title, then its lines with old and new numbers and ± signs,
 * hunks apart. Nine rows show before the rest folds (the title, a removed and an added line
 * and three lines of context each side); the foot shows the counts.
 */
export function DiffView(props: DiffViewProps) {
  const t = useT();
  const { path, hunks, stats, lineNumbers = true, foldAfter = 9, note } = props;
  const [expanded, setExpanded] = useState(false);
  const rows: Row[] = hunks.flatMap((hunk, index): Row[] => [
    ...(index > 0 ? [{ gap: true } as const] : []),
    ...hunk.lines.map((line) => ({ gap: false, line }) as const),
  ]);
  // The title row counts as one of the rows shown before folding.
  const room = Math.max(foldAfter - 1, 0);
  const hidden = rows.length - room;
  const shown = expanded || hidden <= 1 ? rows : rows.slice(0, room);
  return (
    <div className="qp-diff" role="group" aria-label={t('diff.label', { path })}>
      <div className="qp-diff__title">
        <span className="qp-diff__path">{path}</span>
        {note !== undefined && <span className="qp-diff__note">{note}</span>}
      </div>
      <div className={lineNumbers ? 'qp-diff__lines' : 'qp-diff__lines qp-diff__lines--unnumbered'}>
        {shown.map((row, index) =>
          row.gap ? (
            <div key={index} className="qp-diff__gap" aria-hidden="true">
              ⋯
            </div>
          ) : (
            <div key={index} className={`qp-diff__line qp-diff__line--${row.line.kind}`}>
              {lineNumbers && (
                <>
                  <span className="qp-diff__number" aria-hidden="true">
                    {row.line.oldNumber ?? ''}
                  </span>
                  <span className="qp-diff__number" aria-hidden="true">
                    {row.line.newNumber ?? ''}
                  </span>
                </>
              )}
              <span className="qp-diff__sign">{SIGNS[row.line.kind]}</span>
              <span className="qp-diff__code">{row.line.text}</span>
            </div>
          ),
        )}
      </div>
      <div className="qp-toolbar qp-diff__foot">
        {hidden > 1 && (
          <button
            type="button"
            className="qp-button"
            aria-expanded={expanded}
            onClick={() => setExpanded(!expanded)}
          >
            {expanded ? t('diff.showLess') : t('diff.moreLines', { count: hidden })}
          </button>
        )}
        <DiffStats stats={stats} />
      </div>
    </div>
  );
}
