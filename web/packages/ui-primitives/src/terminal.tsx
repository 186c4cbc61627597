import Anser from 'anser';
import { useT } from '@qilin-agent/i18n';
import { useMemo, useState, type CSSProperties } from 'react';
import { CopyButton } from './copy';
import { fold, formatBytes, stripAnsi } from './lines';

/** A run of terminal text in one style. */
export interface AnsiSegment {
  /** The text. */
  text: string;
  /** CSS classes for its colours and decorations. */
  classes: string[];
  /** An exact colour (256-colour and true-colour codes). */
  style?: CSSProperties;
}

const NAMED = /^ansi-(bright-)?(black|red|green|yellow|blue|magenta|cyan|white)$/;

function colour(name: string, truecolor: string, layer: 'fg' | 'bg') {
  const named = NAMED.exec(name);
  if (named) return { className: `qp-ansi-${layer}-${named[1] ? 'bright-' : ''}${named[2]}` };
  if (truecolor !== '' && /^\d+, \d+, \d+$/.test(truecolor)) {
    return { style: { [layer === 'fg' ? 'color' : 'backgroundColor']: `rgb(${truecolor})` } };
  }
  return {};
}

/**
 * Terminal text (with ANSI SGR colours, parsed by anser) as lines of styled segments. The
 * colours carry across line breaks as they do in a terminal; other escape codes are dropped.
 */
export function ansiLines(text: string): AnsiSegment[][] {
  const entries = Anser.ansiToJson(text, { use_classes: true, remove_empty: true });
  const lines: AnsiSegment[][] = [[]];
  for (const entry of entries) {
    const classes: string[] = [];
    let style: CSSProperties | undefined;
    for (const [name, truecolor, layer] of [
      [entry.fg, entry.fg_truecolor, 'fg'],
      [entry.bg, entry.bg_truecolor, 'bg'],
    ] as const) {
      if (!name) continue;
      const found = colour(name, truecolor ?? '', layer);
      if (found.className) classes.push(found.className);
      if (found.style) style = { ...style, ...found.style };
    }
    for (const decoration of entry.decorations ?? []) classes.push(`qp-ansi-${decoration}`);
    entry.content.split('\n').forEach((piece, index) => {
      if (index > 0) lines.push([]);
      if (piece !== '')
        lines[lines.length - 1]?.push({
          text: piece.replace(/\r$/, ''),
          classes,
          ...(style ? { style } : {}),
        });
    });
  }
  if (lines.length > 1 && lines[lines.length - 1]?.length === 0) lines.pop();
  return lines.length === 1 && lines[0]?.length === 0 ? [] : lines;
}

function Line(props: { segments: AnsiSegment[] }) {
  return (
    <span className="qp-terminal__line">
      {props.segments.map((segment, index) =>
        segment.classes.length === 0 && segment.style === undefined ? (
          segment.text
        ) : (
          <span key={index} className={segment.classes.join(' ')} style={segment.style}>
            {segment.text}
          </span>
        ),
      )}
      {'\n'}
    </span>
  );
}

/** Output a live view left out, and the latest output after it. */
export interface TerminalGap {
  /** Bytes of output not shown (the call's result holds them). */
  omittedBytes: number;
  /** The latest output, shown after the gap. */
  tail: string;
}

/** The props of [`TerminalOutput`]. */
export interface TerminalOutputProps {
  /** The output, ANSI colours and all (its start, when `gap` follows it). */
  text: string;
  /** Output left out of a live view after `text`, and the latest output after it. */
  gap?: TerminalGap;
  /** What produced it (the command), for the region's name. */
  label: string;
  /** Lines kept at the top while folded (default 8). */
  headLines?: number;
  /** Lines kept at the bottom while folded (default 8). */
  tailLines?: number;
}

/** A row of the terminal: a line of output, or the note of output left out. */
type Row = { kind: 'line'; segments: AnsiSegment[] } | { kind: 'gap' };

/**
 * A command's output as a terminal shows it. A long output shows its head and tail with
 * "… N more lines" between them; one button shows it all, another copies it (without the
 * colour codes). Output left out of a live view (`gap`) shows as a note between the start and
 * the latest output, never folded away.
 */
export function TerminalOutput(props: TerminalOutputProps) {
  const t = useT();
  const { text, gap, label, headLines = 8, tailLines = 8 } = props;
  const tail = gap?.tail;
  const [expanded, setExpanded] = useState(false);
  const rows = useMemo((): Row[] => {
    const lines = (source: string) =>
      ansiLines(source).map((segments): Row => ({ kind: 'line', segments }));
    return tail === undefined ? lines(text) : [...lines(text), { kind: 'gap' }, ...lines(tail)];
  }, [text, tail]);
  const folded = fold(rows, headLines, tailLines);
  const gapNote =
    gap === undefined ? '' : t('terminal.notShownLive', { size: formatBytes(gap.omittedBytes) });
  const gapHidden =
    folded.kind === 'folded' &&
    gap !== undefined &&
    !folded.head.some((row) => row.kind === 'gap') &&
    !folded.tail.some((row) => row.kind === 'gap');
  const row = (item: Row, key: string) =>
    item.kind === 'line' ? (
      <Line key={key} segments={item.segments} />
    ) : (
      <span key={key} className="qp-terminal__more qp-terminal__gap">
        {gapNote}
        {'\n'}
      </span>
    );
  const copied = gap === undefined ? text : `${text}${gapNote}\n${gap.tail}`;
  return (
    <div className="qp-terminal" role="group" aria-label={t('terminal.label', { command: label })}>
      {/* Focusable, so that a keyboard can scroll a wide or long output. */}
      <pre className="qp-terminal__text" tabIndex={0}>
        {rows.length === 0 && <span className="qp-terminal__empty">{t('terminal.empty')}</span>}
        {folded.kind === 'all' || expanded ? (
          rows.map((item, index) => row(item, String(index)))
        ) : (
          <>
            {folded.head.map((item, index) => row(item, `h${index}`))}
            <span className="qp-terminal__more">
              {t('terminal.moreLines', { count: folded.hidden - (gapHidden ? 1 : 0) })}
            </span>
            {'\n'}
            {gapHidden && row({ kind: 'gap' }, 'gap')}
            {folded.tail.map((item, index) => row(item, `t${index}`))}
          </>
        )}
      </pre>
      <div className="qp-toolbar">
        {folded.kind === 'folded' && (
          <button
            type="button"
            className="qp-button"
            aria-expanded={expanded}
            onClick={() => setExpanded(!expanded)}
          >
            {expanded ? t('terminal.showLess') : t('terminal.showAll')}
          </button>
        )}
        {rows.length > 0 && <CopyButton text={stripAnsi(copied)} />}
      </div>
    </div>
  );
}
