import { useT } from '@qilin-agent/i18n';
import { useState } from 'react';

/** One line of a search result. */
export interface SearchLine {
  /** Its number in the file, from 1. */
  line: number;
  /** Its text. */
  text: string;
  /** True for a line of context around a match. */
  context: boolean;
}

/** The results of one file. */
export interface SearchGroup {
  /** The path as the list shows it. */
  label: string;
  /** The path as the search reported it, given to `openFile`. */
  path: string;
  /** Matching lines in the file, when counted. */
  matchCount?: number;
  /** The matching lines (and context), when the search returned them. */
  lines: readonly SearchLine[];
}

/** The props of [`SearchResults`]. */
export interface SearchResultsProps {
  /** What was searched for, for the region's name. */
  pattern: string;
  /** The files, in order. */
  groups: readonly SearchGroup[];
  /** Opens a file (the host's preview); absent to show paths as text. */
  openFile?: (path: string) => void;
  /** A note under the list (such as "more results were left out"). */
  note?: string;
  /** Files shown before folding (default 8). */
  foldAfter?: number;
}

/** Search results grouped by file: each file's path and count, then its lines. */
export function SearchResults(props: SearchResultsProps) {
  const t = useT();
  const { pattern, groups, openFile, note, foldAfter = 8 } = props;
  const [expanded, setExpanded] = useState(false);
  const hidden = groups.length - foldAfter;
  const shown = expanded || hidden <= 1 ? groups : groups.slice(0, foldAfter);
  if (groups.length === 0) {
    return <p className="qp-caption">{t('search.noMatches')}</p>;
  }
  return (
    <div className="qp-search" role="group" aria-label={t('search.label', { pattern })}>
      <ul className="qp-search__files">
        {shown.map((group) => (
          <li key={group.path} className="qp-search__file">
            <div className="qp-search__header">
              {openFile === undefined ? (
                <span className="qp-search__path">{group.label}</span>
              ) : (
                <button
                  type="button"
                  className="qp-link qp-search__path"
                  aria-label={t('row.openFile', { path: group.label })}
                  onClick={() => openFile(group.path)}
                >
                  {group.label}
                </button>
              )}
              {group.matchCount !== undefined && (
                <span className="qp-caption">
                  {t('search.matches', { count: group.matchCount })}
                </span>
              )}
            </div>
            {group.lines.length > 0 && (
              <pre className="qp-search__lines" tabIndex={0}>
                {group.lines.map((line) => (
                  <span
                    key={line.line}
                    className={
                      line.context ? 'qp-search__line qp-search__line--context' : 'qp-search__line'
                    }
                  >
                    <span className="qp-excerpt__number" aria-hidden="true">
                      {line.line}
                    </span>
                    <span className="qp-excerpt__code">{line.text}</span>
                    {'\n'}
                  </span>
                ))}
              </pre>
            )}
          </li>
        ))}
      </ul>
      {(hidden > 1 || note !== undefined) && (
        <div className="qp-toolbar">
          {hidden > 1 && (
            <button
              type="button"
              className="qp-button"
              aria-expanded={expanded}
              onClick={() => setExpanded(!expanded)}
            >
              {expanded ? t('diff.showLess') : t('search.moreFiles', { count: hidden })}
            </button>
          )}
          {note !== undefined && <span className="qp-caption">{note}</span>}
        </div>
      )}
    </div>
  );
}
