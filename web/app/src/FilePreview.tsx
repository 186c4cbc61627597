import { useEffect, useRef, useState } from 'react';
import { api, type TextFile } from './api';
import { useAppT } from './messages';

/** The most lines the preview renders; the rest are counted, not drawn. */
const MAX_LINES = 5000;

type Loaded =
  | { readonly kind: 'loading' }
  | { readonly kind: 'file'; readonly file: TextFile }
  | { readonly kind: 'failed'; readonly message: string };

/** The right-hand sidebar: a read-only, line-numbered view of one workspace file. */
export function FilePreview(props: { sessionId: string; path: string; onClose: () => void }) {
  const { sessionId, path, onClose } = props;
  const t = useAppT();
  const [loaded, setLoaded] = useState<Loaded>({ kind: 'loading' });
  const close = useRef<HTMLButtonElement>(null);
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
  const lines = loaded.kind === 'file' ? loaded.file.text.split('\n') : [];
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
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
          <pre className="qa-file__text" tabIndex={0} data-language={loaded.file.language}>
            {lines.slice(0, MAX_LINES).map((line, index) => (
              <span key={index} className="qa-file__line">
                <span className="qa-file__number" aria-hidden="true">
                  {index + 1}
                </span>
                {line}
                {'\n'}
              </span>
            ))}
          </pre>
        </>
      ) : null}
    </aside>
  );
}
