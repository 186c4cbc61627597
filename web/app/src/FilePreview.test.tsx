import { I18nProvider } from '@qilin-agent/i18n';
import { render, screen } from '@testing-library/react';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { FilePreview } from './FilePreview';

const SOURCE = ['fn main() {', '    let answer = 42;', '    println!("{answer}");', '}', ''].join(
  '\n',
);

function serveFile(path: string, language: string) {
  const fetch = vi.fn(async () =>
    Response.json({ path, text: SOURCE, size: SOURCE.length, totalLines: 4, language }),
  );
  vi.stubGlobal('fetch', fetch);
  return fetch;
}

describe('FilePreview', () => {
  it('numbers the lines, highlights them for the language, and shows the touched ones', async () => {
    const fetch = serveFile('src/main.rs', 'rust');
    const scrolled: Element[] = [];
    // jsdom lays nothing out and has no `scrollIntoView`: record which line asks to be shown.
    const scrollIntoView = vi.fn(function (this: Element) {
      scrolled.push(this);
    });
    Object.defineProperty(Element.prototype, 'scrollIntoView', {
      value: scrollIntoView,
      configurable: true,
    });
    onTestFinished(() => {
      Reflect.deleteProperty(Element.prototype, 'scrollIntoView');
    });
    const { container } = render(
      <I18nProvider>
        <FilePreview
          sessionId="s1"
          path="src/main.rs"
          lines={{ first: 2, last: 3 }}
          onClose={() => {}}
        />
      </I18nProvider>,
    );
    expect(fetch).toHaveBeenCalledWith(
      '/api/sessions/s1/files/text?path=src%2Fmain.rs',
      expect.anything(),
    );
    expect(await screen.findByText('fn', { selector: '.hljs-keyword' })).toBeTruthy();
    const lines = [...container.querySelectorAll('.qa-file__line')];
    expect(lines.map((line) => line.textContent)).toEqual([
      '1fn main() {\n',
      '2    let answer = 42;\n',
      '3    println!("{answer}");\n',
      '4}\n',
    ]);
    expect(lines.map((line) => line.hasAttribute('data-touched'))).toEqual([
      false,
      true,
      true,
      false,
    ]);
    expect(scrollIntoView).toHaveBeenCalled();
    expect(scrolled.at(-1)).toBe(lines[1]);
    expect(lines[1]?.querySelector('.hljs-number')?.textContent).toBe('42');
  });

  it('finds the language from the extension when the server names none', async () => {
    serveFile('notes/setup.sh', 'text');
    render(
      <I18nProvider>
        <FilePreview sessionId="s1" path="notes/setup.sh" onClose={() => {}} />
      </I18nProvider>,
    );
    // Highlighted as bash: the text shows, and the preview marks itself highlighted.
    await screen.findByText(/fn main/);
    await vi.waitFor(() =>
      expect(document.querySelector('pre[data-highlighted="true"]')).not.toBeNull(),
    );
  });
});
