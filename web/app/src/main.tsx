import '@qilin-agent/ui-primitives/styles.css';
import '@qilin-agent/client-ui-tool/styles.css';
import '@qilin-agent/ui-conversation/styles.css';
import './app.css';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';

createRoot(document.getElementById('root') as HTMLElement).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
