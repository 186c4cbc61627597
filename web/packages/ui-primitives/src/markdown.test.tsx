import { I18nProvider } from '@qilin-agent/i18n';
import { render as renderBare, screen } from '@testing-library/react';
import type { ReactElement } from 'react';
import { describe, expect, it } from 'vitest';
import { MarkdownText } from './markdown';

/** Renders inside the catalogue's provider, as the transcript does. */
const render = (ui: ReactElement) => renderBare(<I18nProvider>{ui}</I18nProvider>);

describe('MarkdownText code blocks', () => {
  it('shows a fenced block plain first, then highlighted', async () => {
    const { container } = render(
      <MarkdownText text={'Run this:\n\n```python\nimport os\nprint(os.getcwd())\n```\n'} />,
    );
    const code = container.querySelector('pre > code');
    expect(code?.textContent).toBe('import os\nprint(os.getcwd())');
    expect(code?.querySelector('span')).toBeNull();
    expect((await screen.findByText('import')).className).toBe('hljs-keyword');
    expect(code?.textContent).toBe('import os\nprint(os.getcwd())');
  });

  it('keeps raw HTML inside a code block as text', async () => {
    const html = '<img src=x onerror="alert(1)">';
    const { container } = render(
      <MarkdownText text={`\`\`\`html\n${html}\n\`\`\`\n\n\`\`\`\n${html}\n\`\`\`\n`} />,
    );
    await screen.findByText('img');
    expect(container.querySelector('img')).toBeNull();
    const blocks = [...container.querySelectorAll('pre > code')].map((c) => c.textContent);
    expect(blocks).toEqual([html, `${html}\n`]);
  });

  it('leaves inline code and unknown languages plain', async () => {
    const { container } = render(
      <MarkdownText
        text={'Use `const x`.\n\n```klingon\nconst x\n```\n\n```ts\nconst y = 1\n```'}
      />,
    );
    await screen.findByText('const', { selector: '.hljs-keyword' });
    const codes = [...container.querySelectorAll('code')];
    expect(codes.map((c) => c.querySelector('span') !== null)).toEqual([false, false, true]);
  });
});

describe('MarkdownText GitHub-flavoured Markdown', () => {
  it('renders a table with its header and alignment', () => {
    const { container } = render(
      <MarkdownText text={'| tool | calls |\n|:---|---:|\n| read | 3 |\n| bash | 12 |\n'} />,
    );
    const headers = [...container.querySelectorAll('table thead th')].map((th) => th.textContent);
    expect(headers).toEqual(['tool', 'calls']);
    const rows = [...container.querySelectorAll('table tbody tr')].map((tr) =>
      [...tr.querySelectorAll('td')].map((td) => td.textContent),
    );
    expect(rows).toEqual([
      ['read', '3'],
      ['bash', '12'],
    ]);
    expect(container.querySelector('tbody td:last-child')?.getAttribute('style')).toContain(
      'text-align: right',
    );
  });

  it('renders strikethrough, task lists and bare URLs', () => {
    const { container } = render(
      <MarkdownText
        text={
          '~~old plan~~ new plan\n\n- [x] read the file\n- [ ] run the tests\n\nSee https://example.com/docs for more.'
        }
      />,
    );
    expect(container.querySelector('del')?.textContent).toBe('old plan');
    const boxes = [...container.querySelectorAll<HTMLInputElement>('li input[type="checkbox"]')];
    expect(boxes.map((box) => [box.checked, box.disabled, box.getAttribute('aria-label')])).toEqual(
      [
        [true, true, 'Done'],
        [false, true, 'Not done'],
      ],
    );
    const link = screen.getByRole('link', { name: 'https://example.com/docs' });
    expect(link.getAttribute('href')).toBe('https://example.com/docs');
    expect(link.getAttribute('rel')).toBe('noopener noreferrer');
  });

  it('keeps raw HTML in a table cell as text', () => {
    const { container } = render(
      <MarkdownText text={'| a |\n|---|\n| <img src=x onerror="alert(1)"> |\n'} />,
    );
    expect(container.querySelector('img')).toBeNull();
    expect(container.querySelector('td')?.textContent).toBe('<img src=x onerror="alert(1)">');
  });
});
