import { useT } from '@qilin-agent/i18n';
import { splitLines } from './lines';

/** The props of [`WebPageSummary`]. */
export interface WebPageSummaryProps {
  /** The page's address after redirects. */
  url: string;
  /** The HTTP status code. */
  status: number;
  /** The response's content type. */
  contentType: string;
  /** Bytes of the body read. */
  bytes: number;
  /** The page's title, when it has one. */
  title?: string;
  /** The content (Markdown of a page, or the text as served). */
  content: string;
  /** True when the body was cut at the size limit. */
  truncated: boolean;
  /** True when `content` is the page's source rather than its text. */
  source?: boolean;
  /** Lines of the content shown (default 10). */
  excerptLines?: number;
}

/** True for an address a link may open: http and https only. */
export function isWebAddress(url: string): boolean {
  try {
    const parsed = new URL(url);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:';
  } catch {
    return false;
  }
}

/** A fetched page: its title and address, status, type and size, and the start of its text. */
export function WebPageSummary(props: WebPageSummaryProps) {
  const t = useT();
  const {
    url,
    status,
    contentType,
    bytes,
    title,
    content,
    truncated,
    source,
    excerptLines = 10,
  } = props;
  const lines = splitLines(content);
  const excerpt = lines.slice(0, excerptLines).join('\n');
  return (
    <article className="qp-web" aria-label={title ?? url}>
      <header className="qp-web__header">
        {title !== undefined && <span className="qp-web__title">{title}</span>}
        {isWebAddress(url) ? (
          <a
            className="qp-link qp-web__url"
            href={url}
            target="_blank"
            rel="noopener noreferrer"
            aria-label={t('web.openPage', { url })}
          >
            {url}
          </a>
        ) : (
          <span className="qp-web__url">{url}</span>
        )}
      </header>
      <p className="qp-caption qp-web__facts">
        {[
          t('web.status', { status }),
          contentType,
          t('web.bytes', { size: Math.ceil(bytes / 1024) }),
          ...(source === true ? [t('web.source')] : []),
          ...(truncated ? [t('web.truncated')] : []),
        ].join(' · ')}
      </p>
      {excerpt !== '' && (
        <pre className="qp-web__excerpt" tabIndex={0}>
          {excerpt}
          {lines.length > excerptLines ? '\n…' : ''}
        </pre>
      )}
    </article>
  );
}
