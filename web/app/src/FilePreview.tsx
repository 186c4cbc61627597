import { useT } from '@qilin-agent/i18n';
import type { FileLines } from '@qilin-agent/client-ui-tool';
import { extensionOf, useHighlightedLines } from '@qilin-agent/ui-primitives';
import { useEffect, useRef, useState } from 'react';
import type { TextFile } from '@qilin-agent/protocol';
import { api } from './api';

/** The most lines the preview renders; the rest are counted, not drawn. */
const MAX_LINES = 5000;

type Loaded =
  | { readonly kind: 'loading' }
  | { readonly kind: 'file'; readonly file: TextFile }
  | { readonly kind: 'failed'; readonly message: string };

/**
 * The right-hand sidebar: a read-only, line-numbered view of one workspace file, highlighted
 * for its language once the highlighter chunk arrives. The lines a call touched (`lines`),
 * when given, are marked and scrolled into view.
 */
export function FilePreview(props: {
  sessionId: string;
  path: string;
  lines?: FileLines | undefined;
  onClose: () => void;
}) {
  const { sessionId, path, lines: touched, onClose } = props;
  const t = useT();
  const [loaded, setLoaded] = useState<Loaded>({ kind: 'loading' });
  const close = useRef<HTMLButtonElement>(null);
  const firstTouched = useRef<HTMLSpanElement>(null);
  useEffect(() => {
    let current = true;
    api.fileText(sessionId, path).then(
      (file) => current && setLoaded({ kind: 'file', file }),
      (error: unknown) =>
        current &&
        setLoaded({
          kind: 'failed',
          message: error instanceof Error ? error.message : String(error),
        }),
    );
    close.current?.focus();
    return () => {
      current = false;
    };
  }, [sessionId, path]);
  const text = loaded.kind === 'file' ? loaded.file.text : '';
  const lines = text.split('\n');
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  const shown = lines.slice(0, MAX_LINES);
  const language =
    loaded.kind !== 'file'
      ? undefined
      : loaded.file.language !== '' && loaded.file.language !== 'text'
        ? loaded.file.language
        : extensionOf(loaded.file.path);
  const highlighted = useHighlightedLines(shown.join('\n'), language);
  const isTouched = (line: number) =>
    touched !== undefined && line >= touched.first && line <= touched.last;
  const fileShown = loaded.kind === 'file';
  useEffect(() => {
    // `block: 'center'` keeps a few lines of context above the touched ones.
    if (fileShown) firstTouched.current?.scrollIntoView?.({ block: 'center' });
  }, [fileShown, touched?.first]);
  return (
    <aside
      className="qc-panel"
      aria-label={t('file.label', { path })}
      onKeyDown={(event) => {
        if (event.key === 'Escape') onClose();
      }}
    >
      <header className="qc-panel__header">
        <h2 className="qa-file__path">{loaded.kind === 'file' ? loaded.file.path : path}</h2>
        <button ref={close} type="button" className="qc-button" onClick={onClose}>
          {t('file.close')}
        </button>
      </header>
      {loaded.kind === 'loading' ? <p role="status">{t('file.loading', { path })}</p> : null}
      {loaded.kind === 'failed' ? (
        <p role="alert" className="qa-problem">
          {t('file.failed', { path, message: loaded.message })}
        </p>
      ) : null}
      {loaded.kind === 'file' ? (
        <>
          <p className="qa-muted qa-file__meta">
            {t('file.lines', {
              lines: String(loaded.file.totalLines),
              size: String(loaded.file.size),
            })}
            {lines.length > MAX_LINES ? ` ${t('file.cut', { shown: String(MAX_LINES) })}` : ''}
          </p>
          <pre
            className="qa-file__text"
            tabIndex={0}
            data-language={loaded.file.language}
            data-highlighted={highlighted === undefined ? undefined : 'true'}
          >
            {shown.map((line, index) => (
              <span
                key={index}
                ref={
                  touched !== undefined && index + 1 === touched.first ? firstTouched : undefined
                }
                className="qa-file__line"
                data-touched={isTouched(index + 1) ? 'true' : undefined}
              >
                <span className="qa-file__number" aria-hidden="true">
                  {index + 1}
                </span>
                {highlighted?.[index] ?? line}
                {'\n'}
              </span>
            ))}
          </pre>
        </>
      ) : null}
    </aside>
  );
}
