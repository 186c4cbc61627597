// Seed rules checked through the tree on recorded sessions: the denial card (nested, and its
// localised fallback), cards from raw fields only, `~` for home, the images slot, Inspect.
import { IMAGES_SLOT, registerBuiltinToolViews } from '@qilin-agent/client-ui-tool';
import { SlotRegistry } from '@qilin-agent/slots';
import { fireEvent, screen, within } from '@testing-library/react';
import { describe, expect, test, vi } from 'vitest';
import { announcedState, renderCall } from '../../../../test-support/tree';

describe('denials', () => {
  test('a denial nested under run_code shows the denial card, with the rule’s reason', () => {
    const { row, expand } = renderCall('review', 'call_6.1');
    expect(row).toHaveTextContent('Tool call · bash · Auto review');
    expect(row).not.toHaveTextContent('rm -rf');
    expect(announcedState(row)).toBe('Denied');
    const card = expand();
    expect(
      within(card).getByText('Not run: deleting folders is not allowed in this workspace'),
    ).toBeInTheDocument();
    expect(card).not.toHaveTextContent('Do not retry');
  });

  test('a reason is shown on one line, trimmed', () => {
    const card = renderCall('review', 'call_4').expand();
    expect(card.querySelector('.qt-denied')?.textContent).toBe(
      'Not run: no network access from this agent ask the user',
    );
  });

  test.each([
    ['en', 'call_5', 'Not run: the review policy did not allow this call'],
    ['zh-CN', 'call_5', '未执行：审查策略不允许此次调用'],
    ['en', 'call_3', 'Not run: the review policy did not allow this call'],
  ] as const)(
    'a blank or missing reason gives the localised fallback (%s %s)',
    (locale, callId, text) => {
      const card = renderCall('review', callId, { locale }).expand();
      expect(card.querySelector('.qt-denied')?.textContent).toBe(text);
      expect(card).not.toHaveTextContent('Do not retry');
    },
  );
});

describe('cards derive from raw event fields', () => {
  test('the generic card never shows the presentation the tool recorded', () => {
    const { row, expand } = renderCall('malformed/unknown-fields', 'call_3');
    expect(row).toHaveTextContent('Tool call · deploy_site · docs');
    const card = expand();
    expect(card).toHaveTextContent('Deployed 3 files.');
    expect(document.body).not.toHaveTextContent('the docs site');
  });
});

describe('paths', () => {
  test('an absolute path inside the session’s folder shows relative; the host gets it whole', () => {
    const openFile = vi.fn();
    const { row } = renderCall('files', 'call_4', { openFile });
    expect(row).toHaveTextContent('Read · README.md');
    expect(row).not.toHaveTextContent('/home/qilin');
    fireEvent.click(within(row).getByRole('button', { name: /^Open / }));
    expect(openFile.mock.calls[0]?.[0]).toBe('/home/qilin/workspace/README.md');
  });

  test('an absolute path under home, outside the session’s folder, shows as ~/…', () => {
    const { row } = renderCall('files', 'call_4', { cwd: '/srv/elsewhere' });
    expect(row).toHaveTextContent('Read · ~/workspace/README.md');
  });

  test('without a home, a path outside the folder stays whole', () => {
    const { row } = renderCall('files', 'call_4', { cwd: '/srv/elsewhere', home: '/root' });
    expect(row).toHaveTextContent('Read · /home/qilin/workspace/README.md');
  });
});

describe('the images slot', () => {
  test('a registration for the tool replaces the gallery of its image card', () => {
    const registry = new SlotRegistry();
    registerBuiltinToolViews({ slots: registry });
    registry.register({ name: IMAGES_SLOT, key: 'read_image' }, (props) => (
      <p data-testid="own-gallery">
        {props.images.length} image: {props.images.map((image) => image.description).join()}
      </p>
    ));
    const card = renderCall('files', 'call_16', { registry }).expand();
    expect(within(card).getByTestId('own-gallery')).toHaveTextContent(
      '1 image: assets/logo.png, 12 × 12',
    );
    expect(card.querySelector('.qp-gallery__item')).toBeNull();
  });
});

describe('Inspect', () => {
  test('every card, nested ones included, asks the host to inspect its own call', () => {
    const inspect = vi.fn();
    renderCall('review', 'call_6', { inspect });
    fireEvent.click(screen.getByRole('button', { name: 'Inspect the call call_6.1' }));
    expect(inspect).toHaveBeenLastCalledWith('call_6.1');
    fireEvent.click(screen.getByRole('button', { name: 'Inspect the call call_6' }));
    expect(inspect).toHaveBeenLastCalledWith('call_6');
  });

  test('without the host’s callback there is no Inspect button', () => {
    renderCall('review', 'call_6');
    expect(screen.queryByRole('button', { name: /^Inspect/ })).toBeNull();
  });
});
