import type { Event } from '@qilin-agent/protocol';

/** When a call's phases happened and in which step, from its events' `time` (RFC 3339, UTC). */
export interface CallTiming {
  /** The turn the call belongs to. */
  readonly turnId: string;
  /** The step of the turn it was made in (a nested call: its `run_code` call's step). */
  readonly step?: number;
  /** When the model named the tool (its first `tool.preparing`). */
  readonly preparingAt?: string;
  /** When it was dispatched (`tool.start`). */
  readonly startedAt?: string;
  /** When it ended (`tool.result`). */
  readonly endedAt?: string;
}

/** When a request was opened and resolved. */
export interface RequestTiming {
  /** When it was opened. */
  readonly openedAt: string;
  /** When it was answered or cancelled. */
  readonly resolvedAt?: string;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * The times the call tree leaves out: when each call was named, dispatched and ended, the step
 * it was made in, and when each request was opened and resolved. Fed with the same events as
 * the fold, in `seq` order; what it keeps is a few strings per call.
 */
export class CallTimeline {
  private readonly calls = new Map<string, Mutable<CallTiming>>();
  private readonly requests = new Map<string, Mutable<RequestTiming>>();
  private turnId = '';
  private step: number | undefined;

  /** The timing of a call, once any of its events was seen. */
  call(callId: string): CallTiming | undefined {
    return this.calls.get(callId);
  }

  /** The timing of a request, once it was opened. */
  request(requestId: string): RequestTiming | undefined {
    return this.requests.get(requestId);
  }

  /** Notes what `event` says about times. */
  record(event: Event): void {
    switch (event.type) {
      case 'turn.started':
        this.turnId = event.turnId;
        this.step = undefined;
        break;
      case 'step.started':
        this.turnId = event.turnId;
        this.step = event.step;
        break;
      case 'tool.preparing':
        this.entry(event.callId, undefined).preparingAt ??= event.time;
        break;
      case 'tool.start':
        this.entry(event.callId, event.parentCallId).startedAt = event.time;
        break;
      case 'tool.result':
        this.entry(event.callId, event.parentCallId).endedAt = event.time;
        break;
      case 'request.opened':
        if (!this.requests.has(event.requestId)) {
          this.requests.set(event.requestId, { openedAt: event.time });
        }
        break;
      case 'request.resolved': {
        const request = this.requests.get(event.requestId);
        if (request !== undefined) request.resolvedAt = event.time;
        break;
      }
      default:
        break;
    }
  }

  /** A call's entry, made on its first event with the turn and step it belongs to. */
  private entry(callId: string, parentCallId: string | undefined): Mutable<CallTiming> {
    let entry = this.calls.get(callId);
    if (entry === undefined) {
      const parent = parentCallId === undefined ? undefined : this.calls.get(parentCallId);
      const step = parent === undefined ? this.step : parent.step;
      entry = {
        turnId: parent?.turnId ?? this.turnId,
        ...(step === undefined ? {} : { step }),
      };
      this.calls.set(callId, entry);
    }
    return entry;
  }
}
