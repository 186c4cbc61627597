import type { en } from './en';

type PluralSuffix = '_zero' | '_one' | '_two' | '_few' | '_many' | '_other';
type WithoutPlural<K extends string> = K extends `${infer Base}${PluralSuffix}` ? Base : K;

/** A key of the catalogue (a plural key without its `_one`/`_other` suffix). */
export type MessageKey = WithoutPlural<keyof typeof en & string>;

/** The values a message's placeholders take; `count` also picks the plural form. */
export type MessageValues = Readonly<Record<string, string | number>>;

/** A message as data: what a card model holds instead of rendered text. */
export interface Message {
  /** The catalogue key. */
  readonly key: MessageKey;
  /** Values for its placeholders. */
  readonly values?: MessageValues;
}

/** Builds a [`Message`]. */
export function message(key: MessageKey, values?: MessageValues): Message {
  return values === undefined ? { key } : { key, values };
}
