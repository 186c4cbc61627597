import '@qilin-agent/ui-primitives/styles.css';
import '@qilin-agent/client-ui-tool/styles.css';
import './gallery.css';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { Gallery } from './Gallery';

const locale = new URLSearchParams(window.location.search).get('lang') === 'zh-CN' ? 'zh-CN' : 'en';
document.documentElement.lang = locale;

createRoot(document.getElementById('root') as HTMLElement).render(
  <StrictMode>
    <Gallery locale={locale} />
  </StrictMode>,
);
