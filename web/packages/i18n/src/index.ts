/**
 * The message catalogue of Qilin's conversation UI: one namespace, `conversation`, with one
 * placeholder syntax (`{{name}}`), shared by the conversation itself (the transcript, its
 * trajectory panel, the page) and the tool copy it shows: the cards' titles, their row chrome
 * and the primitives' labels. English and Simplified Chinese are complete; a test fails when a
 * key is missing from one of them.
 *
 * Views translate at render time; card models keep a [`Message`] (a key and its values), never
 * rendered text.
 */
export { LOCALES, NAMESPACE, catalogues, createI18n, type Locale } from './catalogue';
export { I18nProvider, useLocale, useT, type Translate } from './react';
export type { Message, MessageKey, MessageValues } from './keys';
export { message } from './keys';
export { formatDateTime } from './dates';
