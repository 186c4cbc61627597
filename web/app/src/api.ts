import type {
  AllowCall,
  ErrorBody,
  GoalRecord,
  LoopRecord,
  EventPage,
  Interrupted,
  LspStatusResponse,
  RequestAnswer,
  ResumeGoal,
  ReviewGrant,
  ReviewList,
  ScheduleListOutput,
  ScheduleRecord,
  SearchPage,
  ServerInfo,
  SessionPage,
  SessionView,
  Snapshot,
  TextFile,
  TurnAccepted,
} from '@qilin-agent/protocol';
import { inlineImageLoader, type ImageLoader } from '@qilin-agent/ui-primitives';

/** An error the server answered with: its status, stable code and message. */
export class ServerError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'ServerError';
  }
}

/** The error of an answer that is not OK: the server's own message, else the status. */
async function failure(response: Response, what: string): Promise<ServerError> {
  const text = await response.text();
  let fields: Partial<ErrorBody> = {};
  try {
    fields = (text === '' ? {} : JSON.parse(text)) as typeof fields;
  } catch {
    fields = {};
  }
  return new ServerError(
    response.status,
    fields.code ?? 'http_error',
    fields.message ?? `${what} failed with HTTP ${response.status}`,
  );
}

async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      credentials: 'same-origin',
      headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch (error) {
    throw new ServerError(0, 'unreachable', `the server did not answer (${String(error)})`);
  }
  if (response.status === 204) return undefined as T;
  if (!response.ok) throw await failure(response, `${method} ${path}`);
  const text = await response.text();
  try {
    return (text === '' ? undefined : JSON.parse(text)) as T;
  } catch {
    throw new ServerError(response.status, 'bad_json', `${method} ${path} answered no JSON`);
  }
}

/** Hits asked for at once by the sidebar's search: a screen or two of them. */
const SEARCH_PAGE = 20;

const session = (id: string) => `/api/sessions/${encodeURIComponent(id)}`;

/** The server's API, as the page uses it (the cookie carries the token). */
export const api = {
  /** Trades the token from the URL's fragment for the cookie. */
  auth: (token: string) => call<undefined>('POST', '/api/auth', { token }),
  /** What the server runs. */
  info: () => call<ServerInfo>('GET', '/api/info'),
  /** Sessions, newest activity first; `q` filters by title. */
  sessions: (q?: string) =>
    call<SessionPage>('GET', `/api/sessions?limit=200${q ? `&q=${encodeURIComponent(q)}` : ''}`),
  /** The child sessions of `parent` (the sessions its `agent` calls started), oldest first. */
  children: (parent: string) =>
    call<SessionPage>('GET', `/api/sessions?parent=${encodeURIComponent(parent)}&limit=200`),
  /**
   * Hits for `q` in every session's content (prompts, the model's text, calls' arguments,
   * results and errors, answers), best first; `cursor` asks for the page after a previous one.
   */
  search: (q: string, cursor?: string) =>
    call<SearchPage>(
      'GET',
      `/api/search?q=${encodeURIComponent(q)}&limit=${SEARCH_PAGE}${cursor === undefined ? '' : `&cursor=${encodeURIComponent(cursor)}`}`,
    ),
  /** A new session with the server's defaults. */
  createSession: () => call<SessionView>('POST', '/api/sessions', {}),
  /** A session and where it stands. */
  session: (id: string) => call<SessionView>('GET', session(id)),
  /** Renames a session. */
  rename: (id: string, title: string) => call<SessionView>('PATCH', session(id), { title }),
  /** Deletes a session and its events. */
  remove: (id: string) => call<undefined>('DELETE', session(id)),
  /** Up to `limit` (1 to 1000) of a session's events after `after`. */
  events: (id: string, after: number, limit: number) =>
    call<EventPage>('GET', `${session(id)}/events?after=${after}&limit=${limit}`),
  /**
   * The runtime's tree of up to `turns` (1 to 200) of a session's turns: the latest, or the
   * ones before turn `before` (from 0).
   */
  snapshot: (id: string, turns: number, before?: number) =>
    call<Snapshot>(
      'GET',
      `${session(id)}/snapshot?turns=${turns}${before === undefined ? '' : `&before=${before}`}`,
    ),
  /** Starts a turn; `clientTurnId` makes a retry safe. */
  startTurn: (id: string, prompt: string, clientTurnId: string) =>
    call<TurnAccepted>('POST', `${session(id)}/turns`, { prompt, clientTurnId }),
  /** Interrupts the running turn. */
  interrupt: (id: string) => call<Interrupted>('POST', `${session(id)}/interrupt`),
  /** A text file of the session's workspace. */
  fileText: (id: string, path: string) =>
    call<TextFile>('GET', `${session(id)}/files/text?path=${encodeURIComponent(path)}`),
  /** Pauses the session's goal at once: no turn starts for it until it is resumed. */
  pauseGoal: (id: string) => call<GoalRecord>('POST', `${session(id)}/goal/pause`),
  /**
   * Resumes the session's goal, raising its budget first when `raise` names new limits (a goal
   * whose budget is spent resumes only when the raise leaves some).
   */
  resumeGoal: (id: string, raise: ResumeGoal = {}) =>
    call<GoalRecord>('POST', `${session(id)}/goal/resume`, raise),
  /** Clears the session's goal; answers the cleared goal. */
  clearGoal: (id: string) => call<GoalRecord>('DELETE', `${session(id)}/goal`),
  /** The session's schedules, newest first. */
  schedules: (id: string) => call<ScheduleListOutput>('GET', `${session(id)}/schedules`),
  /** Deletes one of the session's schedules; answers it, `deleted`. */
  deleteSchedule: (id: string, scheduleId: string) =>
    call<ScheduleRecord>('DELETE', `${session(id)}/schedules/${encodeURIComponent(scheduleId)}`),
  /** The session's loops (`LoopRecord`s), read by the loop cards' reader. */
  loops: (id: string) => call<LoopRecord[]>('GET', `${session(id)}/loops`),
  /** The session's reviewed calls that did not run (newest first, at most 50). */
  reviews: (id: string) => call<ReviewList>('GET', `${session(id)}/reviews`),
  /**
   * Allows a call the reviewer model refused: the person's grant for exactly that call, and a
   * turn that tells the model it may run it again (`retry`). Answers the grant; a call that was
   * not refused by the reviewer is refused with the server's message.
   */
  allowCall: (id: string, callId: string) =>
    call<ReviewGrant>('POST', `${session(id)}/reviews/${encodeURIComponent(callId)}/allow`, {
      retry: true,
    } satisfies AllowCall),
  /** The workspace's language servers and where each stands. */
  languageServers: () => call<LspStatusResponse>('GET', '/api/lsp'),
  /** Answers a request. */
  answer: (id: string, requestId: string, reply: RequestAnswer, clientId: string) =>
    call<unknown>('POST', `${session(id)}/requests/${encodeURIComponent(requestId)}`, {
      ...reply,
      clientId,
    } satisfies RequestAnswer),
};

/**
 * The image loader of a session's page: an image in a workspace file comes from the server's
 * image route (the cookie authenticates it) as a `blob:` address; a refusal (no such file, not
 * an image, outside the workspace) rejects with the server's own message. Images carried in an
 * event load as `data:` addresses.
 */
export function sessionImageLoader(sessionId: string): ImageLoader {
  return async (source) => {
    if (source.kind === 'inline') return inlineImageLoader(source);
    const path = `${session(sessionId)}/files/image?path=${encodeURIComponent(source.path)}`;
    let response: Response;
    try {
      response = await fetch(path, { credentials: 'same-origin' });
    } catch (error) {
      throw new ServerError(0, 'unreachable', `the server did not answer (${String(error)})`);
    }
    if (!response.ok) throw await failure(response, `loading ${source.path}`);
    return URL.createObjectURL(await response.blob());
  };
}
