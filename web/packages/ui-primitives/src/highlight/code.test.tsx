import { render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { HighlightedCode, extensionOf } from './code';
import { highlightLines } from './grammars';

describe('HighlightedCode', () => {
  it('shows the plain text at once, then the tokens when the highlighter arrives', async () => {
    const { container } = render(
      <HighlightedCode code={'def greet(name):\n    return "hi " + name'} language="python" />,
    );
    const code = container.querySelector('code');
    expect(code?.textContent).toBe('def greet(name):\n    return "hi " + name');
    expect(code?.querySelector('span')).toBeNull();
    const keyword = await screen.findByText('def');
    expect(keyword.className).toBe('hljs-keyword');
    expect(code?.querySelector('.hljs-string')?.textContent).toBe('"hi "');
    // The highlighted text is the same text.
    expect(code?.textContent).toBe('def greet(name):\n    return "hi " + name');
  });

  it('keeps markup inside the code as text', async () => {
    const source = '<img src=x onerror="alert(1)"><script>alert(2)</script>';
    const { container } = render(<HighlightedCode code={source} language="html" />);
    await screen.findByText('img');
    expect(container.querySelector('img')).toBeNull();
    expect(container.querySelector('script')).toBeNull();
    expect(container.querySelector('code')?.textContent).toBe(source);
  });

  it('leaves a language it does not know plain', async () => {
    const { container } = render(<HighlightedCode code="let x = 1" language="cobol-ish" />);
    // The python block loads the same chunk: once it is highlighted, the other has had its turn.
    render(<HighlightedCode code="import os" language="py" />);
    await screen.findByText('import');
    expect(container.querySelector('code')?.textContent).toBe('let x = 1');
    expect(container.querySelector('code span')).toBeNull();
  });
});

describe('highlightLines', () => {
  it('cuts a token spanning lines into one piece per line, with its classes', () => {
    const lines = highlightLines('a = 1\n"""two\nlines"""\nb = 2', 'python');
    expect(lines).toHaveLength(4);
    const tokenOf = (line: number) => lines?.[line]?.children[0];
    for (const line of [1, 2]) {
      const token = tokenOf(line);
      expect(token?.type).toBe('element');
      expect(token?.type === 'element' && token.properties.className).toEqual(['hljs-string']);
    }
  });

  it('knows the extensions and aliases of its languages, not others', () => {
    expect(highlightLines('x', 'rs')).toHaveLength(1);
    expect(highlightLines('x', 'toml')).toHaveLength(1);
    expect(highlightLines('x', 'tsx')).toHaveLength(1);
    expect(highlightLines('x', 'text')).toBeUndefined();
    expect(extensionOf('src/main.rs')).toBe('rs');
    expect(extensionOf('.bashrc')).toBeUndefined();
    expect(extensionOf('Makefile')).toBeUndefined();
  });
});
