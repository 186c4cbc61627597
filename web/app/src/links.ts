import { parsePlace, sessionHref, type SessionPlace } from '@qilin-agent/client-ui-tool';

/** A session of the page, opened at a place when the address names one (`?at=`). */
export interface SessionAddress {
  /** The session's id. */
  readonly id: string;
  /** Where to open it: a call's card or an event. */
  readonly at?: SessionPlace;
}

/**
 * The session an address of this page opens (`/sessions/<id>`, with `?at=call:<id>` or
 * `?at=seq:<n>`); `undefined` for any other address, another origin's included. An `at` the page
 * cannot read is left out: the session opens at its latest turns.
 */
export function sessionAddress(href: string, origin: string): SessionAddress | undefined {
  let url: URL;
  try {
    url = new URL(href, origin);
  } catch {
    return undefined;
  }
  if (url.origin !== origin) return undefined;
  const match = /^\/sessions\/([^/]+)$/.exec(url.pathname);
  if (match?.[1] === undefined) return undefined;
  let id: string;
  try {
    id = decodeURIComponent(match[1]);
  } catch {
    return undefined;
  }
  const at = parsePlace(url.searchParams.get('at'));
  return at === undefined ? { id } : { id, at };
}

/** The page's address of a session (at a place), as [`sessionAddress`] reads it back. */
export function addressHref(address: SessionAddress | undefined): string {
  return address === undefined ? '/' : sessionHref(address.id, address.at);
}

/**
 * The session address a click on a link of the page goes to, when the page can open it itself
 * instead of loading again: a plain primary click (no modifier key, no other target) on a link
 * to one of its sessions. `undefined` leaves the click to the browser.
 */
export function clickedSessionLink(
  event: Pick<
    MouseEvent,
    'button' | 'metaKey' | 'ctrlKey' | 'shiftKey' | 'altKey' | 'defaultPrevented' | 'target'
  >,
  origin: string,
): SessionAddress | undefined {
  if (event.defaultPrevented || event.button !== 0) return undefined;
  if (event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return undefined;
  const target = event.target;
  if (!(target instanceof Element)) return undefined;
  const link = target.closest('a[href]');
  if (link === null || !(link instanceof HTMLAnchorElement)) return undefined;
  if (link.target !== '' && link.target !== '_self') return undefined;
  if (link.hasAttribute('download')) return undefined;
  return sessionAddress(link.getAttribute('href') ?? '', origin);
}
