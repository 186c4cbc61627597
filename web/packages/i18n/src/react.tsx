import type { i18n } from 'i18next';
import { useMemo, type ReactNode } from 'react';
import { I18nextProvider, useTranslation } from 'react-i18next';
import { createI18n, NAMESPACE, type Locale } from './catalogue';
import type { Message, MessageKey, MessageValues } from './keys';

/** Translates a key (with values) or a [`Message`]. */
export interface Translate {
  (key: MessageKey, values?: MessageValues): string;
  (message: Message): string;
}

/**
 * Provides the catalogue to everything below: pass an i18next instance the host already has
 * (it must hold the `conversation` namespace, see `createI18n`), or a locale.
 */
export function I18nProvider(props: { i18n?: i18n; locale?: Locale; children: ReactNode }) {
  const { i18n: given, locale, children } = props;
  const instance = useMemo(() => given ?? createI18n(locale ?? 'en'), [given, locale]);
  return <I18nextProvider i18n={instance}>{children}</I18nextProvider>;
}

/** The translate function of the conversation namespace. */
export function useT(): Translate {
  const { t } = useTranslation(NAMESPACE);
  return useMemo(() => {
    const translate = (keyOrMessage: MessageKey | Message, values?: MessageValues) => {
      const key = typeof keyOrMessage === 'string' ? keyOrMessage : keyOrMessage.key;
      const given = typeof keyOrMessage === 'string' ? values : keyOrMessage.values;
      return t(key, given ?? {});
    };
    return translate as Translate;
  }, [t]);
}
