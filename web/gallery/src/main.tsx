import '@qilin-agent/ui-primitives/styles.css';
import '@qilin-agent/client-ui-tool/styles.css';
import '@qilin-agent/ui-conversation/styles.css';
import './gallery.css';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { Gallery } from './Gallery';

const query = new URLSearchParams(window.location.search);
const locale = query.get('lang') === 'zh-CN' ? 'zh-CN' : 'en';
document.documentElement.lang = locale;
// The system's colour scheme, unless `?theme=light` or `?theme=dark` picks one.
const theme = query.get('theme');
if (theme === 'light' || theme === 'dark') document.documentElement.dataset.theme = theme;

createRoot(document.getElementById('root') as HTMLElement).render(
  <StrictMode>
    <Gallery locale={locale} />
  </StrictMode>,
);
