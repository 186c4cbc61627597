import { fireEvent, screen, within } from '@testing-library/react';
import { describe, expect, test } from 'vitest';
import { renderWithI18n } from '../../../test-support/render';
import { DiffView, addedFile, countHunks, parseUnifiedDiff } from './diff';
import { FileExcerpt } from './excerpt';
import { ImageGallery, inlineImageLoader, type ImageLoader } from './images';
import { fold, formatBytes, splitLines, stripAnsi } from './lines';
import { ToolRowChrome } from './row';
import { SearchResults } from './search';
import { ExitCapsule, StatusDot } from './status';
import { TerminalOutput, ansiLines } from './terminal';
import { WebPageSummary } from './web';

describe('lines', () => {
  test('split, fold and strip', () => {
    expect(splitLines('a\r\nb\n')).toEqual(['a', 'b']);
    expect(splitLines('')).toEqual([]);
    expect(fold([1, 2, 3, 4, 5], 2, 2)).toEqual({ kind: 'all', items: [1, 2, 3, 4, 5] });
    expect(fold([1, 2, 3, 4, 5, 6], 2, 2)).toEqual({
      kind: 'folded',
      head: [1, 2],
      hidden: 2,
      tail: [5, 6],
    });
    expect(stripAnsi('\u001b[1;31mFAILED\u001b[0m x')).toBe('FAILED x');
  });
});

describe('TerminalOutput', () => {
  test('colours carry across lines; other escapes are dropped', () => {
    const lines = ansiLines('\u001b[32mok\nstill green\u001b[0m plain\n\u001b[2Kdone\n');
    expect(lines).toHaveLength(3);
    expect(lines[0]).toEqual([{ text: 'ok', classes: ['qp-ansi-fg-green'] }]);
    expect(lines[1]?.[0]).toEqual({ text: 'still green', classes: ['qp-ansi-fg-green'] });
    expect(lines[1]?.[1]?.text).toBe(' plain');
    expect(lines[2]?.map((s) => s.text).join('')).toBe('done');
  });

  test('a long output shows head and tail with the count between, and expands', () => {
    const text = Array.from({ length: 40 }, (_, i) => `line ${i + 1}`).join('\n');
    renderWithI18n(<TerminalOutput text={text} label="seq 40" />);
    const region = screen.getByRole('group', { name: 'Output of seq 40' });
    expect(region).toHaveTextContent('line 8');
    expect(region).not.toHaveTextContent('line 9\n');
    expect(region).toHaveTextContent('… 24 more lines');
    expect(region).toHaveTextContent('line 33');
    fireEvent.click(screen.getByRole('button', { name: 'Show all output' }));
    expect(region).toHaveTextContent('line 20');
    expect(screen.getByRole('button', { name: 'Show less' })).toHaveAttribute(
      'aria-expanded',
      'true',
    );
  });

  test('output left out of a live view shows as a note that folding never hides', () => {
    const start = Array.from({ length: 20 }, (_, i) => `start ${i + 1}`).join('\n');
    const tail = Array.from({ length: 20 }, (_, i) => `latest ${i + 1}`).join('\n');
    renderWithI18n(
      <TerminalOutput
        text={`${start}\n`}
        gap={{ omittedBytes: 50 * 1024 * 1024, tail }}
        label="yes"
      />,
    );
    const region = screen.getByRole('group', { name: 'Output of yes' });
    expect(region).toHaveTextContent('start 8');
    expect(region).toHaveTextContent('… 24 more lines');
    expect(region).toHaveTextContent('… 50.0 MB not shown live; the result holds the output');
    expect(region).toHaveTextContent('latest 20');
    fireEvent.click(screen.getByRole('button', { name: 'Show all output' }));
    const text = region.textContent ?? '';
    expect(text.indexOf('start 20')).toBeLessThan(text.indexOf('not shown live'));
    expect(text.indexOf('not shown live')).toBeLessThan(text.indexOf('latest 1\n'));
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(1536)).toBe('1.5 KB');
  });

  test('an empty output says so, in Chinese too', () => {
    renderWithI18n(<TerminalOutput text="" label="true" />, 'zh-CN');
    expect(screen.getByText('（无输出）')).toBeInTheDocument();
  });
});

const EDIT_DIFF = `--- a/src/report.py
+++ b/src/report.py
@@ -6,7 +6,7 @@
 def totals(path):
     # TODO: skip the header row
     rows = list(csv.reader(open(path)))
-    return {"Totla": 1}
+    return {"Total": 1}
 
 
 def main():
`;

describe('DiffView', () => {
  test('parses a unified diff with numbers on both sides', () => {
    const hunks = parseUnifiedDiff(EDIT_DIFF);
    expect(hunks?.[0]?.lines[3]).toEqual({
      kind: 'removed',
      text: '    return {"Totla": 1}',
      oldNumber: 9,
    });
    expect(hunks?.[0]?.lines[4]).toEqual({
      kind: 'added',
      text: '    return {"Total": 1}',
      newNumber: 9,
    });
    expect(countHunks(hunks ?? [])).toEqual({ added: 1, removed: 1 });
    expect(parseUnifiedDiff('not a diff')).toBeUndefined();
  });

  test('nine rows — title, three lines of context each side and one change — fit unfolded', () => {
    const hunks = parseUnifiedDiff(EDIT_DIFF.split('\n').slice(0, 11).join('\n') + '\n') ?? [];
    expect(hunks[0]?.lines).toHaveLength(8);
    const { container } = renderWithI18n(
      <DiffView
        path="src/report.py"
        hunks={hunks}
        stats={{ kind: 'exact', added: 1, removed: 1 }}
      />,
    );
    expect(container.querySelectorAll('.qp-diff__line')).toHaveLength(8);
    expect(screen.queryByRole('button')).toBeNull();
    expect(screen.getByRole('img', { name: '1 lines added, 1 removed' })).toHaveTextContent(
      '+1 −1',
    );
  });

  test('more rows fold after nine, and the rest opens', () => {
    const hunks = addedFile(Array.from({ length: 20 }, (_, i) => `row ${i}`).join('\n'));
    const { container } = renderWithI18n(
      <DiffView path="a.txt" hunks={hunks} stats={{ kind: 'coarse', lines: 20 }} note="new file" />,
    );
    expect(container.querySelectorAll('.qp-diff__line')).toHaveLength(8);
    fireEvent.click(screen.getByRole('button', { name: 'Show 12 more lines' }));
    expect(container.querySelectorAll('.qp-diff__line')).toHaveLength(20);
    expect(screen.getByRole('img', { name: 'about 20 lines written' })).toHaveTextContent('~20');
  });
});

test('FileExcerpt numbers its lines from the first', () => {
  renderWithI18n(
    <FileExcerpt
      path="a.rs"
      lines={['fn a() {}', 'fn b() {}']}
      firstLine={6}
      caption="lines 6–7 of 9"
    />,
  );
  const excerpt = screen.getByRole('figure', { name: 'Lines of a.rs' });
  expect(excerpt).toHaveTextContent('6fn a() {} 7fn b() {}');
  expect(excerpt).toHaveTextContent('lines 6–7 of 9');
});

test('SearchResults groups by file and opens a file through the host', () => {
  const opened: string[] = [];
  renderWithI18n(
    <SearchResults
      pattern="TODO"
      openFile={(path) => opened.push(path)}
      groups={[
        {
          label: 'src/lib.rs',
          path: 'src/lib.rs',
          matchCount: 1,
          lines: [{ line: 8, text: '// TODO', context: false }],
        },
        { label: '~/notes.txt', path: '/home/a/notes.txt', lines: [] },
      ]}
    />,
  );
  const list = screen.getByRole('group', { name: 'Results for TODO' });
  expect(within(list).getByText('1 match')).toBeInTheDocument();
  fireEvent.click(screen.getByRole('button', { name: 'Open ~/notes.txt' }));
  expect(opened).toEqual(['/home/a/notes.txt']);
});

test('WebPageSummary links only web addresses, in a new tab', () => {
  const props = {
    status: 200,
    contentType: 'text/html',
    bytes: 2048,
    content: '# Guide\n\nRun it.',
    truncated: false,
  };
  const { unmount } = renderWithI18n(
    <WebPageSummary url="https://example.com/guide" title="Guide" {...props} />,
  );
  const link = screen.getByRole('link', { name: 'Open https://example.com/guide in a new tab' });
  expect(link).toHaveAttribute('rel', 'noopener noreferrer');
  expect(screen.getByText('HTTP 200 · text/html · 2 KB')).toBeInTheDocument();
  unmount();
  renderWithI18n(<WebPageSummary url="javascript:alert(1)" {...props} />);
  expect(screen.queryByRole('link')).toBeNull();
});

test('the inline image loader shows only raster images', async () => {
  await expect(
    inlineImageLoader({ kind: 'inline', mediaType: 'image/png', data: 'iVBORw0=' }),
  ).resolves.toBe('data:image/png;base64,iVBORw0=');
  await expect(
    inlineImageLoader({ kind: 'inline', mediaType: 'image/svg+xml', data: 'PHN2Zz4=' }),
  ).rejects.toThrow();
  await expect(inlineImageLoader({ kind: 'file', path: 'a.png' })).rejects.toThrow(/in a file/);
});

describe('row chrome', () => {
  test('an in-flight row shimmers, a finished one does not; the capsule follows the text', () => {
    const { container, rerender } = renderWithI18n(
      <ToolRowChrome state="running" icon="terminal" title="Shell" summary="cargo test" />,
    );
    expect(container.querySelector('.qp-row')).toHaveClass('qp-row--running');
    rerender(
      <ToolRowChrome
        state="ok"
        icon="terminal"
        title="Shell"
        summary="cargo test"
        capsule="exit 1"
      />,
    );
    expect(container.querySelector('.qp-row')).not.toHaveClass('qp-row--running');
    const text = container.querySelector('.qp-row__text');
    expect(text?.nextElementSibling).toHaveClass('qp-capsule');
  });

  test('an expandable row is a button that says whether it is open', () => {
    let open = false;
    renderWithI18n(
      <ToolRowChrome
        state="ok"
        icon="file"
        title="Read"
        summary="a.rs"
        expanded={false}
        onToggle={() => (open = true)}
      />,
    );
    const button = screen.getByRole('button', { name: /Read/ });
    expect(button).toHaveAttribute('aria-expanded', 'false');
    fireEvent.click(button);
    expect(open).toBe(true);
  });

  test('dots and capsules carry their words', () => {
    renderWithI18n(
      <>
        <StatusDot state="interrupted" />
        <ExitCapsule label="exit 2" />
      </>,
      'zh-CN',
    );
    expect(screen.getByRole('img', { name: '已中断' })).toBeInTheDocument();
    expect(screen.getByText('exit 2')).toBeInTheDocument();
  });
});

describe('ImageGallery', () => {
  const PNG = 'iVBORw0KGgo=';
  const image = {
    source: { kind: 'file' as const, path: 'shots/home.png' },
    description: 'shots/home.png, 1600 × 900',
    width: 1600,
    height: 900,
  };

  test('shows the image from the loader with its size', async () => {
    const loader: ImageLoader = async (source) =>
      source.kind === 'file' ? `/files/image?path=${source.path}` : 'data:,';
    renderWithI18n(<ImageGallery images={[image]} loadImage={loader} />);
    const shown = await screen.findByRole('img', { name: 'shots/home.png, 1600 × 900' });
    expect(shown).toHaveAttribute('src', '/files/image?path=shots/home.png');
    expect(shown).toHaveAttribute('width', '1600');
  });

  test('a file the loader refuses says why, never a broken image', async () => {
    const loader: ImageLoader = async () => {
      throw new Error('`shots/home.png` does not exist in the workspace');
    };
    const { container } = renderWithI18n(<ImageGallery images={[image]} loadImage={loader} />);
    expect(await screen.findByRole('status')).toHaveTextContent(
      'The image could not be shown: `shots/home.png` does not exist in the workspace',
    );
    expect(container.querySelector('img')).toBeNull();
  });

  test('falls back to the recorded copy, and says the file could not be loaded', async () => {
    const loader: ImageLoader = async (source) => {
      if (source.kind === 'file') throw new Error('not a PNG, JPEG, GIF or WebP image');
      return inlineImageLoader(source);
    };
    renderWithI18n(
      <ImageGallery
        images={[{ ...image, fallback: { kind: 'inline', mediaType: 'image/png', data: PNG } }]}
        loadImage={loader}
      />,
    );
    const shown = await screen.findByRole('img');
    expect(shown.getAttribute('src')).toBe(`data:image/png;base64,${PNG}`);
    expect(screen.getByRole('status')).toHaveTextContent(
      'the file could not be loaded (not a PNG, JPEG, GIF or WebP image)',
    );
  });

  test('bytes the browser cannot decode become a message', async () => {
    const loader: ImageLoader = async () => 'blob:broken';
    const { container } = renderWithI18n(<ImageGallery images={[image]} loadImage={loader} />);
    const shown = await screen.findByRole('img');
    fireEvent.error(shown);
    expect(await screen.findByRole('status')).toHaveTextContent(
      'The image could not be shown: its bytes are not an image the browser can decode',
    );
    expect(container.querySelector('img')).toBeNull();
  });
});
