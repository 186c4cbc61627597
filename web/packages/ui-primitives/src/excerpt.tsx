import { useT } from '@qilin-agent/i18n';
import { useState } from 'react';

/** The props of [`FileExcerpt`]. */
export interface FileExcerptProps {
  /** The file, as the summary shows it. */
  path: string;
  /** The lines shown, without line breaks. */
  lines: readonly string[];
  /** The number of the first line (from 1). */
  firstLine: number;
  /** A line under the excerpt (which lines of how many, what was cut). */
  caption?: string;
  /** Lines shown before folding (default 12). */
  foldAfter?: number;
}

/** Lines of a file with their numbers; a long excerpt folds, with a button for the rest. */
export function FileExcerpt(props: FileExcerptProps) {
  const t = useT();
  const { path, lines, firstLine, caption, foldAfter = 12 } = props;
  const [expanded, setExpanded] = useState(false);
  const hidden = lines.length - foldAfter;
  const shown = expanded || hidden <= 1 ? lines : lines.slice(0, foldAfter);
  return (
    <figure className="qp-excerpt" aria-label={t('excerpt.label', { path })}>
      {/* Focusable, so that a keyboard can scroll a wide excerpt. */}
      <pre className="qp-excerpt__lines" tabIndex={0}>
        {shown.map((line, index) => (
          <span key={index} className="qp-excerpt__line">
            <span className="qp-excerpt__number" aria-hidden="true">
              {firstLine + index}
            </span>
            <span className="qp-excerpt__code">{line}</span>
            {'\n'}
          </span>
        ))}
      </pre>
      {(caption !== undefined || hidden > 1) && (
        <figcaption className="qp-toolbar">
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
          {caption !== undefined && <span className="qp-caption">{caption}</span>}
        </figcaption>
      )}
    </figure>
  );
}
