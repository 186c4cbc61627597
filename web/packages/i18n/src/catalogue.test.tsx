import { act, render, screen } from '@testing-library/react';
import { describe, expect, test } from 'vitest';
import { catalogues, createI18n, LOCALES } from './catalogue';
import { en } from './en';
import { I18nProvider, useT } from './react';
import { message } from './keys';

const placeholders = (text: string) => [...text.matchAll(/\{\{(\w+)\}\}/g)].map((m) => m[1]).sort();
const base = (key: string) => key.replace(/_(one|other)$/, '');

describe('every locale is complete', () => {
  test.each(LOCALES)('%s has every key, none empty, with the same placeholders', (locale) => {
    const catalogue = catalogues[locale];
    const keys = new Set(Object.keys(en).map(base));
    expect(new Set(Object.keys(catalogue).map(base))).toEqual(keys);
    for (const [key, text] of Object.entries(catalogue)) {
      expect(text.trim(), key).not.toBe('');
      const source =
        (en as Record<string, string>)[key] ?? (en as Record<string, string>)[`${base(key)}_other`];
      expect(placeholders(text), key).toEqual(placeholders(source ?? ''));
    }
    for (const key of Object.keys(catalogue).filter((k) => k.endsWith('_other'))) {
      expect(placeholders(catalogue[key] ?? ''), key).toContain('count');
    }
  });
});

describe('one placeholder syntax', () => {
  /** i18next's `{{name}}`, or `{{name, format}}` for a value formatted for the locale. */
  const PLACEHOLDER = /\{\{\s*(\w+)(?:\s*,\s*\w+)?\s*\}\}/g;

  test.each(LOCALES)('%s: every brace belongs to a {{name}} placeholder', (locale) => {
    for (const [key, text] of Object.entries(catalogues[locale])) {
      expect(text.replace(PLACEHOLDER, ''), key).not.toMatch(/[{}]/);
    }
  });

  test.each(LOCALES)(
    '%s: every placeholder is filled by the catalogue’s own instance',
    (locale) => {
      const instance = createI18n(locale);
      for (const [key, text] of Object.entries(catalogues[locale])) {
        const values = Object.fromEntries(
          [...text.matchAll(PLACEHOLDER)].map((match) => [
            match[1],
            match[1] === 'count' ? 2 : 'X',
          ]),
        );
        const shown = instance.t(base(key), values);
        expect(shown, key).not.toMatch(/[{}]/);
        expect(shown, key).not.toBe(base(key));
      }
    },
  );
});

describe('translation', () => {
  test('plural forms follow the count in English and Chinese', () => {
    const english = createI18n('en');
    expect(english.t('terminal.moreLines', { count: 1 })).toBe('… 1 more line');
    expect(english.t('terminal.moreLines', { count: 12 })).toBe('… 12 more lines');
    const chinese = createI18n('zh-CN');
    expect(chinese.t('terminal.moreLines', { count: 1 })).toBe('… 还有 1 行');
    expect(chinese.t('row.preparingContent', { size: 3 })).toBe('正在准备内容 3 KB');
  });

  test('a view translates keys and messages, without escaping the text twice', () => {
    function View() {
      const t = useT();
      return (
        <p>
          {t('denied.notRun', { reason: '<rm -rf> & co' })} / {t(message('status.interrupted'))}
        </p>
      );
    }
    render(
      <I18nProvider locale="zh-CN">
        <View />
      </I18nProvider>,
    );
    expect(screen.getByText('未执行：<rm -rf> & co / 已中断')).toBeInTheDocument();
  });
});

test('views follow a language change of the host’s instance', async () => {
  const instance = createI18n('en');
  function View() {
    return <p>{useT()('status.running')}</p>;
  }
  render(
    <I18nProvider i18n={instance}>
      <View />
    </I18nProvider>,
  );
  expect(screen.getByText('Running')).toBeInTheDocument();
  await act(() => instance.changeLanguage('zh-CN'));
  expect(screen.getByText('运行中')).toBeInTheDocument();
});
