import type { LspStatusResponse } from '@qilin-agent/protocol';
import { I18nProvider, type Locale } from '@qilin-agent/i18n';
import { act, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { BUSY_POLL_MS, LanguageServers, useLanguageServers } from './LanguageServers';

const STATUS: LspStatusResponse = {
  workspace: '/home/qilin/workspace',
  servers: [
    {
      language: 'python',
      server: 'pyright-langserver',
      state: 'ready',
      pid: 4120,
      restarts: 0,
      sandboxed: true,
      network: false,
    },
    {
      language: 'typescript',
      server: 'typescript-language-server',
      state: 'indexing',
      pid: 4188,
      restarts: 0,
      sandboxed: true,
      network: true,
      progress: 'Indexing 120/480 files',
    },
    {
      language: 'rust',
      server: 'rust-analyzer',
      state: 'not_installed',
      restarts: 0,
      sandboxed: true,
      network: false,
      hint: 'rustup component add rust-analyzer',
    },
    {
      language: 'go',
      server: 'gopls',
      state: 'crashed',
      restarts: 2,
      sandboxed: false,
      network: true,
      lastError: 'gopls exited with signal 9',
    },
  ],
};

/** Answers `GET /api/lsp` with each of `answers` in turn (the last one again after). */
function serve(...answers: (() => Response)[]) {
  let asked = 0;
  const fetch = vi.fn(async (url: string) => {
    expect(url).toBe('/api/lsp');
    const answer = answers[Math.min(asked, answers.length - 1)] as () => Response;
    asked += 1;
    return answer();
  });
  vi.stubGlobal('fetch', fetch);
  return fetch;
}

const json =
  (body: unknown, status = 200) =>
  () =>
    new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });

function Header() {
  const { state, refresh } = useLanguageServers();
  return <LanguageServers state={state} refresh={refresh} />;
}

function show(locale: Locale = 'en') {
  return render(
    <I18nProvider locale={locale}>
      <Header />
    </I18nProvider>,
  );
}

afterEach(() => {
  vi.unstubAllGlobals();
  vi.useRealTimers();
});

describe('the language servers in the header', () => {
  it('says how many are ready and which need attention; each state inside', async () => {
    serve(json(STATUS));
    const { container } = show();
    const summary = await screen.findByText('Language servers');
    const details = container.querySelector('details') as HTMLDetailsElement;
    expect(details).toHaveTextContent('1 of 4 ready');
    expect(details).toHaveAttribute('data-attention', 'true');
    expect(details).toHaveTextContent('needs attention');
    fireEvent.click(summary);
    const list = screen.getByRole('list', { name: 'Language servers' });
    const items = within(list).getAllByRole('listitem');
    expect(items.map((item) => item.dataset.state)).toEqual([
      'ready',
      'indexing',
      'not_installed',
      'crashed',
    ]);
    expect(items[0]).toHaveTextContent('pythonpyright-langserverreadyprocess 4120');
    expect(items[1]).toHaveTextContent('Progress: Indexing 120/480 files');
    expect(
      within(items[2] as HTMLElement).getByText('rustup component add rust-analyzer').tagName,
    ).toBe('CODE');
    expect(items[3]).toHaveTextContent('restarted 2 times · not sandboxed');
    expect(items[0]).not.toHaveTextContent('not sandboxed');
    expect(items[3]).toHaveTextContent('Last error: gopls exited with signal 9');
  });

  it('reads the list again while a server indexes, and stops once all are settled', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    const settled = {
      ...STATUS,
      servers: STATUS.servers.map((server) =>
        server.state === 'indexing'
          ? { ...server, state: 'ready' as const, progress: undefined }
          : server,
      ),
    };
    const fetch = serve(json(STATUS), json(settled));
    const { container } = show();
    await screen.findByText('Language servers');
    expect(container.querySelector('details')).toHaveTextContent('1 of 4 ready');
    await act(async () => {
      await vi.advanceTimersByTimeAsync(BUSY_POLL_MS);
    });
    await waitFor(() =>
      expect(container.querySelector('details')).toHaveTextContent('2 of 4 ready'),
    );
    const asked = fetch.mock.calls.length;
    await act(async () => {
      await vi.advanceTimersByTimeAsync(BUSY_POLL_MS * 3);
    });
    expect(fetch.mock.calls.length).toBe(asked);
  });

  it('shows nothing without servers or without the route; a failure in the disclosure', async () => {
    serve(json({ workspace: '/w', servers: [] }));
    const { container, unmount } = show();
    await waitFor(() => expect(fetch).toHaveBeenCalled());
    expect(container.querySelector('details')).toBeNull();
    unmount();

    serve(json({ code: 'not_found', message: 'no route' }, 404));
    const absent = show();
    await waitFor(() => expect(fetch).toHaveBeenCalled());
    expect(absent.container.querySelector('details')).toBeNull();
    absent.unmount();

    serve(json({ code: 'internal', message: 'the pool is gone' }, 500));
    show('zh-CN');
    fireEvent.click(await screen.findByText('语言服务器'));
    expect(screen.getByRole('alert')).toHaveTextContent('无法读取语言服务器：the pool is gone');
  });

  it('opening the disclosure reads the list again', async () => {
    const fetch = serve(json(STATUS));
    const { container } = show();
    await screen.findByText('Language servers');
    const details = container.querySelector('details') as HTMLDetailsElement;
    const before = fetch.mock.calls.length;
    details.open = true;
    fireEvent(details, new Event('toggle'));
    await waitFor(() => expect(fetch.mock.calls.length).toBe(before + 1));
  });
});
