import { registerBuiltinToolViews, ToolCallTree } from '@qilin-agent/client-ui-tool';
import { I18nProvider } from '@qilin-agent/i18n';
import { SlotRegistry, SlotsProvider } from '@qilin-agent/slots';
import { render, screen } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { nodeOf } from '../../test-support/tree';
import { useSessionFolders } from './folders';

/** The server's view of session `s1`, with the folders given. */
function serveView(workspace: string, home?: string) {
  const fetch = vi.fn(async () =>
    Response.json({
      id: 's1',
      workspace,
      agent: 'fixture',
      agentFile: null,
      model: 'scripted',
      title: null,
      createdAt: '2026-01-01T00:00:00Z',
      lastActivity: '2026-01-01T00:00:00Z',
      status: 'idle',
      turns: 1,
      headSeq: 1,
      activeTurn: null,
      openRequests: [],
      hosted: true,
      ...(home === undefined ? {} : { home }),
    }),
  );
  vi.stubGlobal('fetch', fetch);
  return fetch;
}

/** What the session page does: the tree given the folders the server named. */
function Page() {
  const folders = useSessionFolders('s1');
  const registry = new SlotRegistry();
  registerBuiltinToolViews({ slots: registry });
  return (
    <I18nProvider locale="en">
      <SlotsProvider registry={registry}>
        <p data-testid="folders">{`${folders.cwd ?? '-'} ${folders.home ?? '-'}`}</p>
        <ToolCallTree
          node={nodeOf('files', 'call_4')}
          {...(folders.cwd === undefined ? {} : { cwd: folders.cwd })}
          {...(folders.home === undefined ? {} : { home: folders.home })}
        />
      </SlotsProvider>
    </I18nProvider>
  );
}

describe('useSessionFolders', () => {
  it('asks the server for the session, and a path under its workspace shows relative', async () => {
    const fetch = serveView('/home/qilin/workspace', '/home/qilin');
    render(<Page />);
    expect(await screen.findByText('/home/qilin/workspace /home/qilin')).toBeTruthy();
    expect(fetch).toHaveBeenCalledWith('/api/sessions/s1', expect.anything());
    expect(screen.getByText('README.md')).toBeTruthy();
  });

  it('a path under home, outside the workspace, shows as ~/…', async () => {
    serveView('/srv/project', '/home/qilin');
    render(<Page />);
    expect(await screen.findByText('~/workspace/README.md')).toBeTruthy();
  });

  it('without a home from the server, the path stays whole', async () => {
    serveView('/srv/project');
    render(<Page />);
    expect(await screen.findByText('/srv/project -')).toBeTruthy();
    expect(screen.getByText('/home/qilin/workspace/README.md')).toBeTruthy();
  });
});
