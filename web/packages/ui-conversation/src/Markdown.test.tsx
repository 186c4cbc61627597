import { render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { MarkdownText } from './Markdown';

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
