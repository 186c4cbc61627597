// The language servers of the server's workspace, in the session's header: a small disclosure
// saying how many are ready (and when one needs attention), each server's state inside — not
// installed with how to install it, indexing with its progress, crashed with its last error.
import { useT } from '@qilin-agent/i18n';
import type { LspServerState, LspServerStatus, LspStatusResponse } from '@qilin-agent/protocol';
import { useCallback, useEffect, useRef, useState } from 'react';
import { api, ServerError } from './api';

/** How often the list is read again while a server starts or indexes. */
export const BUSY_POLL_MS = 3000;

/** The states that change on their own soon: the list is read again while one is shown. */
const BUSY: readonly LspServerState[] = ['starting', 'indexing'];

/** The states a person should look at. */
const ATTENTION: readonly LspServerState[] = ['not_installed', 'crashed'];

/** The dot of each state, in the call rows' colours. */
const DOTS: Record<LspServerState, string> = {
  not_installed: 'error',
  stopped: 'interrupted',
  starting: 'running',
  indexing: 'running',
  ready: 'ok',
  crashed: 'error',
};

/** What the header knows of the language servers. */
export type LanguageServersState =
  | { readonly kind: 'loading' }
  | { readonly kind: 'read'; readonly status: LspStatusResponse }
  | { readonly kind: 'absent' }
  | { readonly kind: 'failed'; readonly message: string };

/**
 * Reads the workspace's language servers: once, again whenever `refresh` is called, and every
 * [`BUSY_POLL_MS`] while one starts or indexes. A server without the route (404) is `absent`.
 */
export function useLanguageServers(): { state: LanguageServersState; refresh: () => void } {
  const [state, setState] = useState<LanguageServersState>({ kind: 'loading' });
  const live = useRef(true);
  const refresh = useCallback(() => {
    api.languageServers().then(
      (status) => live.current && setState({ kind: 'read', status }),
      (error: unknown) => {
        if (!live.current) return;
        if (error instanceof ServerError && error.status === 404) setState({ kind: 'absent' });
        else
          setState({
            kind: 'failed',
            message: error instanceof Error ? error.message : String(error),
          });
      },
    );
  }, []);
  useEffect(() => {
    live.current = true;
    refresh();
    return () => {
      live.current = false;
    };
  }, [refresh]);
  const busy =
    state.kind === 'read' && state.status.servers.some((server) => BUSY.includes(server.state));
  useEffect(() => {
    if (!busy) return undefined;
    const timer = setInterval(refresh, BUSY_POLL_MS);
    return () => clearInterval(timer);
  }, [busy, refresh]);
  return { state, refresh };
}

/** One server: its language and command, its state in words, and what it says about itself. */
function ServerItem(props: { server: LspServerStatus }) {
  const t = useT();
  const { server } = props;
  const facts = [
    server.pid === undefined ? undefined : t('lspStatus.pid', { pid: server.pid }),
    server.restarts === 0 ? undefined : t('lspStatus.restarts', { count: server.restarts }),
    server.sandboxed ? undefined : t('lspStatus.unsandboxed'),
  ].filter((fact) => fact !== undefined);
  return (
    <li className="qa-lsp__server" data-state={server.state}>
      <div className="qa-lsp__line">
        <span className="qa-lsp__language">{server.language}</span>
        <code className="qa-lsp__command">{server.server}</code>
        <span className="qa-lsp__state">
          <span className={`qp-dot qp-dot--${DOTS[server.state]}`} aria-hidden="true" />
          {t(`lspStatus.state.${server.state}`)}
        </span>
        {facts.length > 0 && <span className="qa-muted">{facts.join(' · ')}</span>}
      </div>
      {server.progress !== undefined && (
        <p className="qa-lsp__detail">
          <span className="qa-muted">{t('lspStatus.progress')}:</span> {server.progress}
        </p>
      )}
      {server.hint !== undefined && (
        <p className="qa-lsp__detail">
          <span className="qa-muted">{t('lspStatus.install')}:</span> <code>{server.hint}</code>
        </p>
      )}
      {server.lastError !== undefined && (
        <p className="qa-lsp__detail qa-lsp__error">
          <span className="qa-muted">{t('lspStatus.lastError')}:</span> {server.lastError}
        </p>
      )}
    </li>
  );
}

/**
 * "Language servers · 1 of 2 ready" as a disclosure in the session's header; opening it reads
 * the list again. Nothing is shown while the list is read, when the server has no such route, or
 * when the workspace has no language servers.
 */
export function LanguageServers(props: { state: LanguageServersState; refresh: () => void }) {
  const t = useT();
  const { state, refresh } = props;
  if (state.kind === 'loading' || state.kind === 'absent') return null;
  if (state.kind === 'read' && state.status.servers.length === 0) return null;
  const servers = state.kind === 'read' ? state.status.servers : [];
  const ready = servers.filter((server) => server.state === 'ready').length;
  const attention = state.kind === 'failed' || servers.some((s) => ATTENTION.includes(s.state));
  return (
    <details
      className="qa-lsp"
      data-attention={attention ? 'true' : undefined}
      onToggle={(event) => {
        if (event.currentTarget.open) refresh();
      }}
    >
      <summary className="qa-lsp__summary">
        {t('lspStatus.label')}
        <span className="qa-muted">
          {' · '}
          {state.kind === 'read'
            ? t('lspStatus.summary', { ready, total: servers.length })
            : t('lspStatus.attention')}
        </span>
        {attention && state.kind === 'read' && (
          <span className="qa-lsp__attention">
            <span className="qp-dot qp-dot--error" aria-hidden="true" />
            {t('lspStatus.attention')}
          </span>
        )}
      </summary>
      <div className="qa-lsp__panel">
        {state.kind === 'failed' ? (
          <p className="qa-problem" role="alert">
            {t('lspStatus.failed', { message: state.message })}
          </p>
        ) : (
          <ul className="qa-lsp__servers" aria-label={t('lspStatus.label')}>
            {servers.map((server) => (
              <ServerItem key={`${server.language}/${server.server}`} server={server} />
            ))}
          </ul>
        )}
        <button type="button" className="qc-button" onClick={refresh}>
          {t('lspStatus.refresh')}
        </button>
      </div>
    </details>
  );
}
