import { message, type Message } from '@qilin-agent/i18n';
import type { RequestNode } from '@qilin-agent/protocol';
import { asRecord } from './common';

/** One question of a request still waiting, as the note under the card lists it. */
export interface AskedQuestion {
  readonly id: string;
  readonly question: string;
  readonly options?: readonly string[];
  readonly multiSelect: boolean;
}

/** What the card of a call shows about one of its requests. */
export interface RequestNote {
  /** The request's id. */
  readonly requestId: string;
  /** True while the call waits on it (the note is announced as a status). */
  readonly waiting: boolean;
  /** The state: what the call waits for, or how the request ended. */
  readonly headline: Message;
  /** Why the policy asks for approval, as the runtime gave it. */
  readonly reason?: string;
  /** The questions a person is asked, while they wait for an answer. */
  readonly questions?: readonly AskedQuestion[];
}

/** The questions of an ask, leaving out any that are not well formed. */
function askedQuestions(value: unknown): AskedQuestion[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((raw): AskedQuestion[] => {
    const item = asRecord(raw);
    if (item === undefined || typeof item.id !== 'string' || typeof item.question !== 'string')
      return [];
    const options = Array.isArray(item.options)
      ? item.options.filter((option): option is string => typeof option === 'string')
      : undefined;
    return [
      {
        id: item.id,
        question: item.question,
        ...(options === undefined || options.length === 0 ? {} : { options }),
        multiSelect: item.multi_select === true,
      },
    ];
  });
}

function waitingNote(request: RequestNode): RequestNote {
  const ask = request.ask as { kind: string; reason?: unknown; questions?: unknown };
  const base = { requestId: request.requestId, waiting: true };
  if (ask.kind === 'approval') {
    return {
      ...base,
      headline: message('request.waitingApproval'),
      ...(typeof ask.reason === 'string' && ask.reason.trim() !== ''
        ? { reason: ask.reason.trim() }
        : {}),
    };
  }
  if (ask.kind === 'question') {
    return {
      ...base,
      headline: message('request.waitingAnswer'),
      questions: askedQuestions(ask.questions),
    };
  }
  return { ...base, headline: message('request.waiting') };
}

function resolvedNote(request: RequestNode): RequestNote | undefined {
  const resolution = request.resolution as { outcome: string; reason?: unknown } | undefined;
  // A question's answers and verdict are the question card's own; an approval's outcome is not
  // shown anywhere else.
  if (resolution === undefined || request.ask.kind === 'question') return undefined;
  const by = request.resolvedBy ?? '';
  const base = { requestId: request.requestId, waiting: false };
  const reason = request.ask.kind === 'approval' ? { reason: request.ask.reason } : {};
  switch (resolution.outcome) {
    case 'approved':
      return { ...base, ...reason, headline: message('request.approved', { by }) };
    case 'approved_for_session': {
      const grant = (resolution as { grant?: { tool?: unknown; commandPrefix?: unknown } }).grant;
      const what =
        typeof grant?.commandPrefix === 'string'
          ? grant.commandPrefix
          : typeof grant?.tool === 'string'
            ? grant.tool
            : '';
      return {
        ...base,
        ...reason,
        headline: message('request.approvedForSession', { by, what }),
      };
    }
    case 'denied':
      return {
        ...base,
        ...reason,
        headline:
          typeof resolution.reason === 'string' && resolution.reason.trim() !== ''
            ? message('request.deniedWithReason', { by, reason: resolution.reason.trim() })
            : message('request.denied', { by }),
      };
    case 'dismissed':
      return { ...base, ...reason, headline: message('request.dismissed', { by }) };
    case 'cancelled':
      return { ...base, ...reason, headline: message('request.cancelled') };
    default:
      return { ...base, headline: message('request.ended', { outcome: resolution.outcome }) };
  }
}

/**
 * What a call's card says about its requests: the one it waits on (what for: an approval with
 * the policy's reason, answers to the listed questions), and how each approval ended. A request
 * left open on a call that no longer waits (a log cut short) says nothing.
 */
export function requestNotes(
  requests: readonly RequestNode[],
  pending: RequestNode | undefined,
): RequestNote[] {
  return requests.flatMap((request) => {
    if (request === pending) return [waitingNote(request)];
    const note = resolvedNote(request);
    return note === undefined ? [] : [note];
  });
}
