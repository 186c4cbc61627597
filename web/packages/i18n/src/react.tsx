import type { i18n, TFunction } from 'i18next';
import {
  createContext,
  useCallback,
  useContext,
  useMemo,
  useSyncExternalStore,
  type ReactNode,
} from 'react';
import { I18nextProvider } from 'react-i18next';
import { createI18n, NAMESPACE, type Locale } from './catalogue';
import type { Message, MessageKey, MessageValues } from './keys';

/** Translates a key (with values) or a [`Message`]. */
export interface Translate {
  (key: MessageKey, values?: MessageValues): string;
  (message: Message): string;
}

const TranslateContext = createContext<Translate | null>(null);
const LocaleContext = createContext<Locale>('en');

function translateWith(t: TFunction): Translate {
  const translate = (keyOrMessage: MessageKey | Message, values?: MessageValues) => {
    const key = typeof keyOrMessage === 'string' ? keyOrMessage : keyOrMessage.key;
    const given = typeof keyOrMessage === 'string' ? values : keyOrMessage.values;
    return t(key, given ?? {});
  };
  return translate as Translate;
}

/**
 * Provides the catalogue to everything below: pass an i18next instance the host already has
 * (it must hold the `conversation` namespace, see `createI18n`), or a locale. The provider
 * alone follows language changes, so a transcript of thousands of labels costs one
 * subscription, not one per label; `react-i18next` works below it too.
 */
export function I18nProvider(props: { i18n?: i18n; locale?: Locale; children: ReactNode }) {
  const { i18n: given, locale, children } = props;
  const instance = useMemo(() => given ?? createI18n(locale ?? 'en'), [given, locale]);
  const subscribe = useCallback(
    (changed: () => void) => {
      instance.on('languageChanged', changed);
      return () => instance.off('languageChanged', changed);
    },
    [instance],
  );
  const current = useCallback(() => instance.language, [instance]);
  // The same on a server, so the provider renders to a string too.
  const language = useSyncExternalStore(subscribe, current, current);
  const translate = useMemo(
    () => translateWith(instance.getFixedT(language, NAMESPACE)),
    [instance, language],
  );
  return (
    <I18nextProvider i18n={instance}>
      <LocaleContext.Provider value={language as Locale}>
        <TranslateContext.Provider value={translate}>{children}</TranslateContext.Provider>
      </LocaleContext.Provider>
    </I18nextProvider>
  );
}

/** The translate function of the conversation namespace, in the provider's language. */
export function useT(): Translate {
  const translate = useContext(TranslateContext);
  if (translate === null)
    throw new Error('useT is used outside <I18nProvider>; wrap the views in one');
  return translate;
}

/** The provider's locale, for formatting dates and numbers beside its messages. */
export function useLocale(): Locale {
  return useContext(LocaleContext);
}
