/**
 * The message catalogue of Qilin's conversation UI: one namespace, `conversation`, shared by
 * the tool cards, their primitives and (later) the conversation itself. English and
 * Simplified Chinese are complete; a test fails when a key is missing from one of them.
 *
 * Views translate at render time; card models keep a [`Message`] (a key and its values), never
 * rendered text.
 */
export { LOCALES, NAMESPACE, catalogues, createI18n, type Locale } from './catalogue';
export { I18nProvider, useLocale, useT, type Translate } from './react';
export type { Message, MessageKey, MessageValues } from './keys';
export { message } from './keys';
export { formatDateTime } from './dates';
