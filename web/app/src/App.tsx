import { registerBuiltinToolViews } from '@qilin-agent/client-ui-tool';
import { I18nProvider, type Locale, useT } from '@qilin-agent/i18n';
import { SlotRegistry } from '@qilin-agent/slots';
import { registerSkillView } from '@qilin-agent/ui-skill';
import { registerConversationNodes } from '@qilin-agent/ui-conversation';
import {
  useCallback,
  useEffect,
  useMemo,
  useRef,
  useState,
  type KeyboardEvent,
  type MouseEvent,
} from 'react';
import type { SessionInfo } from '@qilin-agent/protocol';
import { api, ServerError } from './api';
import { addressHref, clickedSessionLink, sessionAddress, type SessionAddress } from './links';
import { ChildSessions, useSessionFamily } from './family';
import { ContentHits, useContentSearch } from './Search';
import { SessionPage } from './Session';

type Theme = 'system' | 'light' | 'dark';

function stored<T extends string>(key: string, allowed: readonly T[], fallback: T): T {
  try {
    const value = localStorage.getItem(key);
    return allowed.includes(value as T) ? (value as T) : fallback;
  } catch {
    return fallback;
  }
}

function remember(key: string, value: string): void {
  try {
    localStorage.setItem(key, value);
  } catch {
    // Storage refused (private mode): the choice lasts for this page only.
  }
}

/** The session the page's address opens (`/sessions/ID`, maybe `?at=` a place in it). */
function sessionInPath(): SessionAddress | undefined {
  return sessionAddress(window.location.href, window.location.origin);
}

function navigate(address: SessionAddress | undefined): void {
  const path = addressHref(address);
  if (window.location.pathname + window.location.search !== path) {
    window.history.pushState(null, '', path);
  }
}

/** The token in the URL's fragment, taken out of the address bar at once. */
function takeToken(): string | undefined {
  const fragment = new URLSearchParams(window.location.hash.slice(1));
  const token = fragment.get('token') ?? undefined;
  if (token !== undefined) {
    window.history.replaceState(null, '', window.location.pathname + window.location.search);
  }
  return token;
}

type Access = 'checking' | 'ok' | 'refused';

/** The page: the session list, the open session, the language and theme switches. */
export function App() {
  const [locale, setLocale] = useState<Locale>(() =>
    stored(
      'qilin.locale',
      ['en', 'zh-CN'] as const,
      navigator.language.startsWith('zh') ? 'zh-CN' : 'en',
    ),
  );
  const [theme, setTheme] = useState<Theme>(() =>
    stored('qilin.theme', ['system', 'light', 'dark'] as const, 'system'),
  );
  useEffect(() => {
    document.documentElement.lang = locale;
    remember('qilin.locale', locale);
  }, [locale]);
  useEffect(() => {
    if (theme === 'system') delete document.documentElement.dataset.theme;
    else document.documentElement.dataset.theme = theme;
    remember('qilin.theme', theme);
  }, [theme]);
  const registry = useMemo(() => {
    const created = new SlotRegistry();
    registerBuiltinToolViews({ slots: created });
    registerSkillView({ slots: created });
    registerConversationNodes(created);
    return created;
  }, []);
  return (
    <I18nProvider locale={locale}>
      <Shell
        registry={registry}
        locale={locale}
        setLocale={setLocale}
        theme={theme}
        setTheme={setTheme}
      />
    </I18nProvider>
  );
}

function Shell(props: {
  registry: SlotRegistry;
  locale: Locale;
  setLocale: (locale: Locale) => void;
  theme: Theme;
  setTheme: (theme: Theme) => void;
}) {
  const t = useT();
  const [access, setAccess] = useState<Access>('checking');
  const [sessions, setSessions] = useState<SessionInfo[]>([]);
  const [address, setAddress] = useState<SessionAddress | undefined>(sessionInPath);
  const current = address?.id;
  const [query, setQuery] = useState('');
  const content = useContentSearch(query, api.search);
  const [problem, setProblem] = useState<string>();
  // On a narrow screen the session list folds behind a button (on a wide one it always shows).
  const [sessionsShown, setSessionsShown] = useState(false);
  const toggle = useRef<HTMLButtonElement>(null);
  const foldSessions = () => {
    if (!sessionsShown) return;
    setSessionsShown(false);
    toggle.current?.focus({ preventScroll: true });
  };
  const family = useSessionFamily(current);

  const refresh = useCallback(async (q: string) => {
    try {
      const page = await api.sessions(q.trim() === '' ? undefined : q.trim());
      setSessions(page.sessions);
      setAccess('ok');
    } catch (error) {
      if (error instanceof ServerError && error.status === 401) setAccess('refused');
      else setProblem(error instanceof Error ? error.message : String(error));
    }
  }, []);

  useEffect(() => {
    const token = takeToken();
    void (async () => {
      if (token !== undefined) {
        try {
          await api.auth(token);
        } catch (error) {
          setProblem(error instanceof Error ? error.message : String(error));
        }
      }
      await refresh('');
      if (sessionInPath() === undefined) {
        try {
          const info = await api.info();
          if (info.demoSession) {
            const demo = { id: info.demoSession };
            navigate(demo);
            setAddress(demo);
          }
        } catch {
          // Without /api/info the list still works.
        }
      }
    })();
    const onPop = () => setAddress(sessionInPath());
    window.addEventListener('popstate', onPop);
    return () => window.removeEventListener('popstate', onPop);
  }, [refresh]);

  // The list follows titles and statuses as turns run.
  useEffect(() => {
    if (access !== 'ok') return;
    const timer = setInterval(() => void refresh(query), 5000);
    return () => clearInterval(timer);
  }, [access, query, refresh]);

  const open = (id: string) => {
    navigate({ id });
    setAddress({ id });
    setSessionsShown(false);
  };
  // A link to a session (a search hit, a card's link) opens it in this page, at its place.
  const follow = (event: MouseEvent<HTMLDivElement>) => {
    const target = clickedSessionLink(event.nativeEvent, window.location.origin);
    if (target === undefined) return;
    event.preventDefault();
    navigate(target);
    setAddress(target);
    setSessionsShown(false);
  };
  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    if (event.key === 'Escape' && sessionsShown) foldSessions();
  };
  const currentTitle = sessions.find((session) => session.id === current)?.title;
  const create = async () => {
    try {
      const created = await api.createSession();
      await refresh(query);
      open(created.id);
    } catch (error) {
      setProblem(error instanceof Error ? error.message : String(error));
    }
  };
  const rename = async (session: SessionInfo) => {
    const title = window.prompt(t('app.renamePrompt'), session.title ?? '');
    if (title === null || title.trim() === '') return;
    try {
      await api.rename(session.id, title.trim());
      await refresh(query);
    } catch (error) {
      setProblem(error instanceof Error ? error.message : String(error));
    }
  };
  const remove = async (session: SessionInfo) => {
    if (!window.confirm(t('app.deleteConfirm'))) return;
    try {
      await api.remove(session.id);
      if (current === session.id) {
        navigate(undefined);
        setAddress(undefined);
      }
      await refresh(query);
    } catch (error) {
      setProblem(error instanceof Error ? error.message : String(error));
    }
  };

  return (
    <div
      className="qa-app"
      data-sessions={sessionsShown ? 'shown' : 'folded'}
      onClick={follow}
      onKeyDown={onKeyDown}
    >
      <header className="qa-appbar">
        <button
          ref={toggle}
          type="button"
          className="qc-button qa-appbar__toggle"
          aria-expanded={sessionsShown}
          aria-controls="qa-sidebar"
          onClick={() => setSessionsShown((shown) => !shown)}
        >
          {t('app.sessions')}
        </button>
        <span className="qa-appbar__title">
          {current === undefined ? 'Qilin' : (currentTitle ?? t('app.untitled'))}
        </span>
      </header>
      <nav id="qa-sidebar" className="qa-sidebar" aria-label={t('app.sessions')}>
        <div className="qa-sidebar__top">
          <h1 className="qa-brand">Qilin</h1>
          <button
            type="button"
            className="qc-button qc-button--primary"
            onClick={() => void create()}
          >
            {t('app.newSession')}
          </button>
        </div>
        <input
          type="search"
          className="qc-input qa-search"
          aria-label={t('app.search')}
          placeholder={t('app.search')}
          value={query}
          onChange={(event) => {
            setQuery(event.target.value);
            void refresh(event.target.value);
          }}
        />
        <ContentHits
          search={content.state}
          more={content.more}
          {...(current === undefined ? {} : { current })}
        />
        <h2 className="qa-sidebar__heading">{t('app.sessions')}</h2>
        {sessions.length === 0 ? (
          <p className="qa-muted">
            {query.trim() === '' ? t('app.noSessions') : t('app.noTitles')}
          </p>
        ) : null}
        <ul className="qa-sessions">
          {sessions.map((session) => (
            <li key={session.id} className="qa-sessions__item" data-session-id={session.id}>
              <a
                href={`/sessions/${encodeURIComponent(session.id)}`}
                aria-current={session.id === current ? 'page' : undefined}
                onClick={(event) => {
                  event.preventDefault();
                  open(session.id);
                }}
              >
                <span className="qa-sessions__title">{session.title ?? t('app.untitled')}</span>
                <span className="qa-sessions__meta">
                  {session.status === 'running' ? '● ' : ''}
                  {session.agent} · {session.model}
                </span>
              </a>
              <span className="qa-sessions__actions">
                <button
                  type="button"
                  className="qa-link-button"
                  onClick={() => void rename(session)}
                  aria-label={`${t('app.rename')}: ${session.title ?? t('app.untitled')}`}
                >
                  {t('app.rename')}
                </button>
                <button
                  type="button"
                  className="qa-link-button"
                  onClick={() => void remove(session)}
                  aria-label={`${t('app.delete')}: ${session.title ?? t('app.untitled')}`}
                >
                  {t('app.delete')}
                </button>
              </span>
              <ChildSessions parent={session} family={family} current={current} open={open} />
            </li>
          ))}
        </ul>
        <div className="qa-settings">
          <label>
            {t('app.language')}
            <select
              className="qc-input"
              value={props.locale}
              onChange={(event) => props.setLocale(event.target.value as Locale)}
            >
              <option value="en">English</option>
              <option value="zh-CN">简体中文</option>
            </select>
          </label>
          <label>
            {t('app.theme')}
            <select
              className="qc-input"
              value={props.theme}
              onChange={(event) => props.setTheme(event.target.value as Theme)}
            >
              <option value="system">{t('app.theme.system')}</option>
              <option value="light">{t('app.theme.light')}</option>
              <option value="dark">{t('app.theme.dark')}</option>
            </select>
          </label>
        </div>
      </nav>
      <main className="qa-main">
        {problem === undefined ? null : (
          <p role="alert" className="qa-problem">
            {problem}
          </p>
        )}
        {access === 'refused' ? (
          <p role="alert" className="qa-problem">
            {t('auth.missing')}
          </p>
        ) : access === 'checking' ? null : current === undefined ? (
          <p className="qa-muted qa-pick">{t('app.pick')}</p>
        ) : (
          <SessionPage
            key={current}
            sessionId={current}
            {...(address?.at === undefined ? {} : { at: address.at })}
            registry={props.registry}
          />
        )}
      </main>
    </div>
  );
}
