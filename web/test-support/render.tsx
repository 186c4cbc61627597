// Test helpers: render inside the providers every view needs.
import { render, type RenderResult } from '@testing-library/react';
import { I18nProvider, type Locale } from '@qilin-agent/i18n';
import type { ReactElement } from 'react';

/** Renders `ui` with the message catalogue of `locale`. */
export function renderWithI18n(ui: ReactElement, locale: Locale = 'en'): RenderResult {
  return render(ui, {
    wrapper: ({ children }) => <I18nProvider locale={locale}>{children}</I18nProvider>,
  });
}
