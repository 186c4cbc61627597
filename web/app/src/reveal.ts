import type { SessionPlace } from '@qilin-agent/client-ui-tool';
import type { ConversationStore, EventPage } from '@qilin-agent/protocol';
import type { RevealTarget } from '@qilin-agent/ui-conversation';
import { useEffect, useState } from 'react';
import { api } from './api';

/** How the page reads one event of a session (the server's API). */
export interface EventReader {
  /** Up to `limit` of a session's events after `after`. */
  events(sessionId: string, after: number, limit: number): Promise<EventPage>;
}

/** What a place of a session is in the transcript: a call's card, or a turn. */
type Anchor =
  | { readonly kind: 'call'; readonly callId: string }
  | { readonly kind: 'turn'; readonly turnId: string };

/**
 * The card or turn an event of a session shows in: its call when it is about one (a call's
 * events, the requests it opened), else its turn; `undefined` for an event outside any turn
 * (`session.started`) or a `seq` the session does not have.
 */
export async function anchorOfEvent(
  reader: EventReader,
  sessionId: string,
  seq: number,
): Promise<Anchor | undefined> {
  const page = await reader.events(sessionId, seq - 1, 1);
  const event: unknown = page.events[0];
  if (typeof event !== 'object' || event === null) return undefined;
  const fields = event as Record<string, unknown>;
  if (fields.seq !== seq) return undefined;
  if (typeof fields.callId === 'string' && fields.callId !== '') {
    return { kind: 'call', callId: fields.callId };
  }
  if (typeof fields.turnId === 'string' && fields.turnId !== '') {
    return { kind: 'turn', turnId: fields.turnId };
  }
  return undefined;
}

/** Whether `model` holds the card or turn of `anchor`. */
function holds(model: ConversationStore, anchor: Anchor): boolean {
  return anchor.kind === 'call'
    ? model.call(anchor.callId) !== undefined
    : model.getSnapshot().tree.turns.some((turn) => turn.turnId === anchor.turnId);
}

/**
 * Makes `model` hold the card or turn of `anchor`: loads the earlier turns a page at a time
 * (`loadEarlier`) until it does or none remain; returns whether it does. Stops early when
 * `cancelled` says so.
 */
export async function loadUntilHeld(
  model: ConversationStore,
  anchor: Anchor,
  loadEarlier: () => Promise<void>,
  cancelled: () => boolean = () => false,
): Promise<boolean> {
  for (;;) {
    if (holds(model, anchor)) return true;
    if (model.getSnapshot().tree.firstTurn === 0 || cancelled()) return false;
    const before = model.getSnapshot().tree.firstTurn;
    await loadEarlier();
    // A page that brought nothing would be asked for again and again.
    if (model.getSnapshot().tree.firstTurn >= before) return holds(model, anchor);
  }
}

/** Where finding the place a link opened stands. */
export type RevealState =
  | { readonly kind: 'none' }
  | { readonly kind: 'finding' }
  | { readonly kind: 'found'; readonly target: RevealTarget }
  | { readonly kind: 'missing' }
  | { readonly kind: 'failed'; readonly message: string };

/** Resolves once `model` has its first state (the server's snapshot, or events). */
function started(model: ConversationStore): Promise<void> {
  return new Promise((resolve) => {
    if (model.seq > 0) {
      resolve();
      return;
    }
    const stop = model.subscribe(() => {
      if (model.seq === 0) return;
      stop();
      resolve();
    });
  });
}

/**
 * The place of a session the page was opened at (`?at=`), found in its conversation: once the
 * conversation has started, the card of the call (or the turn of the event) is looked for in the
 * turns loaded, the earlier turns loaded a page at a time until it is there. A place not found
 * is waited for while the session's events stream in (it may be in the turn running now).
 */
export function useRevealPlace(
  sessionId: string,
  model: ConversationStore,
  at: SessionPlace | undefined,
  loadEarlier: () => Promise<void>,
  reader: EventReader = api,
): RevealState {
  /** Where finding `at` stands, once it has moved on from looking. */
  const [outcome, setOutcome] = useState<{ at: SessionPlace; state: RevealState }>();
  useEffect(() => {
    if (at === undefined) return;
    let cancelled = false;
    let stopWaiting: (() => void) | undefined;
    const settle = (state: RevealState) => {
      if (!cancelled) setOutcome({ at, state });
    };
    const found = (anchor: Anchor) =>
      settle({
        kind: 'found',
        target: {
          anchor: anchor.kind === 'call' ? `call:${anchor.callId}` : `turn:${anchor.turnId}`,
        },
      });
    void (async () => {
      try {
        await started(model);
        if (cancelled) return;
        const anchor =
          at.kind === 'call'
            ? ({ kind: 'call', callId: at.callId } as const)
            : await anchorOfEvent(reader, sessionId, at.seq);
        if (anchor === undefined) {
          settle({ kind: 'missing' });
          return;
        }
        if (await loadUntilHeld(model, anchor, loadEarlier, () => cancelled)) {
          found(anchor);
          return;
        }
        if (cancelled) return;
        settle({ kind: 'missing' });
        // It may be in the turn running now: it shows when its events stream in.
        stopWaiting = model.subscribe(() => {
          if (!holds(model, anchor)) return;
          stopWaiting?.();
          stopWaiting = undefined;
          found(anchor);
        });
      } catch (error) {
        settle({ kind: 'failed', message: error instanceof Error ? error.message : String(error) });
      }
    })();
    return () => {
      cancelled = true;
      stopWaiting?.();
    };
  }, [sessionId, model, at, loadEarlier, reader]);
  if (at === undefined) return NONE;
  return outcome !== undefined && outcome.at === at ? outcome.state : FINDING;
}

const NONE: RevealState = { kind: 'none' };
const FINDING: RevealState = { kind: 'finding' };
