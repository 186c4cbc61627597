import { useT } from '@qilin-agent/i18n';
import {
  CallTrajectory,
  Conversation,
  MarkdownText,
  type AnswerRequest,
} from '@qilin-agent/ui-conversation';
import {
  createLoopHook,
  createToolCallHooks,
  type FileLines,
  type SessionPlace,
} from '@qilin-agent/client-ui-tool';
import { SlotsProvider, type SlotRegistry } from '@qilin-agent/slots';
import {
  useCallback,
  useEffect,
  useMemo,
  useState,
  useSyncExternalStore,
  type KeyboardEvent,
} from 'react';
import { api, ServerError, sessionImageLoader } from './api';
import { FilePreview } from './FilePreview';
import { GoalBanner } from './GoalBanner';
import { LanguageServers, useLanguageServers } from './LanguageServers';
import { useSessionGoal } from './goal';
import { useSessionLoops } from './loops';
import { SchedulesPanel } from './SchedulesPanel';
import { useSessionSchedules } from './schedules';
import { useChildSession } from './children';
import { useSessionFolders } from './folders';
import { useRevealPlace, type RevealState } from './reveal';
import { useAllowedCalls } from './reviews';
import { useSessionStream } from './stream';

/** A random id: for this tab (`clientId`) and for each prompt (`clientTurnId`). */
export function randomId(): string {
  return typeof crypto.randomUUID === 'function'
    ? crypto.randomUUID()
    : Math.random().toString(36).slice(2) + Date.now().toString(36);
}

const TAB_ID = randomId();

/** What the right-hand panel shows: a file's preview, or one call's trajectory. */
type SidePanel =
  | { readonly kind: 'file'; readonly path: string; readonly lines?: FileLines | undefined }
  | { readonly kind: 'call'; readonly callId: string };

/** What the page says while it finds the place a link opened, or why it could not. */
function RevealNote(props: { state: RevealState }) {
  const t = useT();
  const { state } = props;
  if (state.kind === 'finding') {
    return (
      <p className="qa-muted qa-reveal" role="status">
        {t('reveal.finding')}
      </p>
    );
  }
  if (state.kind === 'missing' || state.kind === 'failed') {
    return (
      <p className="qa-problem qa-reveal" role="alert">
        {state.kind === 'missing'
          ? t('reveal.missing')
          : t('reveal.failed', { message: state.message })}
      </p>
    );
  }
  return null;
}

/**
 * One session: its live conversation, the composer, and the file or call panel beside them;
 * opened at `at` (a call's card, an event's turn) when a link named a place.
 */
export function SessionPage(props: {
  sessionId: string;
  registry: SlotRegistry;
  at?: SessionPlace;
}) {
  const { sessionId, registry, at } = props;
  const t = useT();
  const goal = useSessionGoal(sessionId);
  const schedules = useSessionSchedules(sessionId);
  const loops = useSessionLoops(sessionId);
  const { book: loopBook, onEvents: loopEvents, refresh: refreshLoops } = loops;
  const allowedCalls = useAllowedCalls(sessionId);
  const refreshAllowed = allowedCalls.refresh;
  const { onEvents: goalEvents, refresh } = goal;
  const { onEvents: scheduleEvents, refresh: refreshSchedules } = schedules;
  const onEvents = useCallback(
    (events: readonly unknown[]) => {
      goalEvents(events);
      scheduleEvents(events);
      loopEvents(events);
    },
    [goalEvents, scheduleEvents, loopEvents],
  );
  const { model, status, loadEarlier } = useSessionStream(sessionId, onEvents);
  const languageServers = useLanguageServers();
  useEffect(() => {
    // A reconnect may have missed events: read the goal, the schedules and the loops again.
    if (status === 'live') {
      refresh();
      refreshSchedules();
      refreshAllowed();
      refreshLoops();
    }
  }, [status, refresh, refreshSchedules, refreshAllowed, refreshLoops]);
  const place = useRevealPlace(sessionId, model, at, loadEarlier);
  const snapshot = useSyncExternalStore(model.subscribe, model.getSnapshot);
  const shared = useMemo(
    () => ({
      tool: {
        ...createToolCallHooks(model),
        host: { loadImage: sessionImageLoader(sessionId) },
        useChildSession,
        useLoop: createLoopHook(loopBook),
        markdown: MarkdownText,
      },
    }),
    [model, sessionId, loopBook],
  );
  const answer = useMemo<AnswerRequest>(
    () => async (requestId, reply) => {
      await api.answer(sessionId, requestId, reply, TAB_ID);
    },
    [sessionId],
  );
  // A refusal comes back as the server's error; the card shows its message.
  const allowCall = useCallback(
    async (callId: string) => {
      await api.allowCall(sessionId, callId);
    },
    [sessionId],
  );
  const session = snapshot.session;
  const folders = useSessionFolders(sessionId);
  const cwd = folders.cwd ?? session?.workspace;
  const [side, setSide] = useState<SidePanel>();
  const openFile = useCallback(
    (path: string, lines?: FileLines) => setSide({ kind: 'file', path, lines }),
    [],
  );
  const inspect = useCallback((callId: string) => setSide({ kind: 'call', callId }), []);
  const closeSide = useCallback(() => setSide(undefined), []);
  return (
    <div className="qa-session-wrap">
      <section className="qa-session" aria-label={session?.agent.name ?? sessionId}>
        <header className="qa-session__header">
          <dl className="qa-facts">
            <div>
              <dt>{t('session.agent')}</dt>
              <dd>{session?.agent.name ?? '…'}</dd>
            </div>
            <div>
              <dt>{t('session.model')}</dt>
              <dd>{session?.model ?? '…'}</dd>
            </div>
          </dl>
          <LanguageServers state={languageServers.state} refresh={languageServers.refresh} />
          <p className="qa-status" role="status" data-stream={status}>
            {status === 'live' ? '' : t(`stream.${status}`)}
          </p>
        </header>
        {goal.goal != null && goal.goal.status !== 'cleared' && (
          <GoalBanner sessionId={sessionId} goal={goal.goal} onChange={goal.take} />
        )}
        {schedules.schedules !== undefined && (
          <SchedulesPanel
            sessionId={sessionId}
            schedules={schedules.schedules}
            onDeleted={schedules.removed}
          />
        )}
        <RevealNote state={place} />
        <SlotsProvider registry={registry} shared={shared}>
          <Conversation
            snapshot={snapshot}
            reveal={place.kind === 'found' ? place.target : undefined}
            loadEarlier={loadEarlier}
            answer={answer}
            allowCall={allowCall}
            allowedCalls={allowedCalls.allowed}
            openFile={openFile}
            inspect={inspect}
            {...(cwd === undefined ? {} : { cwd })}
            {...(folders.home === undefined ? {} : { home: folders.home })}
          />
        </SlotsProvider>
        <Composer sessionId={sessionId} running={snapshot.running} connected={status === 'live'} />
      </section>
      {side?.kind === 'file' ? (
        <FilePreview
          key={side.path}
          sessionId={sessionId}
          path={side.path}
          lines={side.lines}
          onClose={closeSide}
        />
      ) : null}
      {side?.kind === 'call' ? (
        <CallTrajectory
          snapshot={snapshot}
          callId={side.callId}
          inspect={inspect}
          onClose={closeSide}
        />
      ) : null}
    </div>
  );
}

function Composer(props: { sessionId: string; running: boolean; connected: boolean }) {
  const { sessionId, running, connected } = props;
  const t = useT();
  const [text, setText] = useState('');
  const [sending, setSending] = useState(false);
  const [failure, setFailure] = useState<string>();
  const busy = running || sending;
  const reason = running ? t('composer.busy') : !connected ? t('composer.offline') : undefined;
  const send = async () => {
    const prompt = text.trim();
    if (prompt === '' || busy) return;
    setSending(true);
    setFailure(undefined);
    try {
      await api.startTurn(sessionId, prompt, randomId());
      setText('');
    } catch (error) {
      setFailure(error instanceof ServerError ? error.message : String(error));
    } finally {
      setSending(false);
    }
  };
  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.nativeEvent.isComposing) {
      event.preventDefault();
      void send();
    }
  };
  const stop = async () => {
    try {
      await api.interrupt(sessionId);
    } catch (error) {
      setFailure(error instanceof ServerError ? error.message : String(error));
    }
  };
  return (
    <form
      className="qa-composer"
      onSubmit={(event) => {
        event.preventDefault();
        void send();
      }}
    >
      <label htmlFor="qa-prompt" className="qc-visually-hidden">
        {t('composer.label')}
      </label>
      <textarea
        id="qa-prompt"
        className="qa-composer__input"
        value={text}
        rows={3}
        placeholder={t('composer.placeholder')}
        onChange={(event) => setText(event.target.value)}
        onKeyDown={onKeyDown}
        aria-describedby="qa-composer-reason"
      />
      <div className="qa-composer__bar">
        <p id="qa-composer-reason" className="qa-composer__reason" aria-live="polite">
          {failure === undefined ? (reason ?? '') : t('composer.failed', { message: failure })}
        </p>
        {running ? (
          <button type="button" className="qc-button" onClick={() => void stop()}>
            {t('composer.stop')}
          </button>
        ) : null}
        <button
          type="submit"
          className="qc-button qc-button--primary"
          disabled={busy || text.trim() === ''}
        >
          {t('composer.send')}
        </button>
      </div>
    </form>
  );
}
