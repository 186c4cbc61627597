import type { ConversationTree } from '@qilin-agent/protocol';
import { findCall } from './callPlace';

/**
 * A place of the transcript to bring into view and highlight: the element whose
 * `data-chat-anchor-key` is `anchor` (`call:<callId>` for a call's card, `turn:<turnId>` for a
 * turn). A new object reveals again, even at the same anchor.
 */
export interface RevealTarget {
  /** The anchor key. */
  readonly anchor: string;
}

/** The class of the element a reveal brought into view: a highlight that fades. */
export const REVEALED_CLASS = 'qc-revealed';

/**
 * The attribute that names a place of the transcript for paging and selection: `turn:<turnId>`
 * on a turn, `call:<callId>` on every call's wrapper, root or nested (with `data-chat-call-id`).
 */
export const ANCHOR_ATTRIBUTE = 'data-chat-anchor-key';

/** The element of `content` with the anchor key `anchor`, if it is rendered. */
export function anchored(content: Element, anchor: string): Element | undefined {
  const quoted = anchor.replace(/["\\]/g, '\\$&');
  return content.querySelector(`[${ANCHOR_ATTRIBUTE}="${quoted}"]`) ?? undefined;
}

/**
 * The first place of `content` that has an anchor key, and that key: the first turn, or, for a
 * turn without an id, its first call. Paging holds it where it is while earlier turns load.
 */
export function firstAnchored(content: Element): { element: Element; key: string } | undefined {
  const element = content.querySelector(`[${ANCHOR_ATTRIBUTE}]`);
  const key = element?.getAttribute(ANCHOR_ATTRIBUTE);
  return element === null || key === null || key === undefined ? undefined : { element, key };
}

/**
 * The element that shows `anchor` in `content`: its own, or for a call the tree keeps folded
 * (a finished call's nested calls past the first few show behind "Show N more calls"), the
 * nearest call above it that is rendered. `undefined` while none is.
 */
export function revealedElement(
  content: Element,
  tree: ConversationTree,
  anchor: string,
): Element | undefined {
  const own = anchored(content, anchor);
  if (own !== undefined || !anchor.startsWith('call:')) return own;
  const place = findCall(tree, anchor.slice('call:'.length));
  if (place === undefined) return undefined;
  for (const ancestor of [...place.ancestors].reverse()) {
    const shown = anchored(content, `call:${ancestor.callId}`);
    if (shown !== undefined) return shown;
  }
  return undefined;
}
