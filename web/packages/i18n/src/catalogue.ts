import i18next, { type i18n } from 'i18next';
import { initReactI18next } from 'react-i18next';
import { en } from './en';
import { zhCN } from './zh-CN';

/** The one namespace of the conversation UI's messages. */
export const NAMESPACE = 'conversation';

/** The locales with a complete catalogue. */
export const LOCALES = ['en', 'zh-CN'] as const;

/** One of [`LOCALES`]. */
export type Locale = (typeof LOCALES)[number];

/** Every locale's messages, by key. */
export const catalogues: Readonly<Record<Locale, Readonly<Record<string, string>>>> = {
  en,
  'zh-CN': zhCN,
};

/**
 * A ready i18next instance for `locale` with the conversation namespace (initialised
 * synchronously, so the first render is already translated). English fills any gap.
 */
export function createI18n(locale: Locale = 'en'): i18n {
  const instance = i18next.createInstance();
  void instance.use(initReactI18next).init({
    lng: locale,
    fallbackLng: 'en',
    supportedLngs: [...LOCALES],
    ns: [NAMESPACE],
    defaultNS: NAMESPACE,
    resources: Object.fromEntries(LOCALES.map((name) => [name, { [NAMESPACE]: catalogues[name] }])),
    keySeparator: false,
    nsSeparator: false,
    interpolation: { escapeValue: false },
    initAsync: false,
    returnNull: false,
  });
  return instance;
}
