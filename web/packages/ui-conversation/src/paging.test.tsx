// Paging and selection find a place of the transcript by its `data-chat-anchor-key` (a turn's
// `turn:<id>`, every call wrapper's `call:<id>`), the DOM convention the tool tree keeps.
import { createToolCallHooks, registerBuiltinToolViews } from '@qilin-agent/client-ui-tool';
import { I18nProvider } from '@qilin-agent/i18n';
import { ConversationStore } from '@qilin-agent/protocol';
import { SlotRegistry, SlotsProvider } from '@qilin-agent/slots';
import { act, fireEvent, render } from '@testing-library/react';
import { useSyncExternalStore } from 'react';
import { describe, expect, it, vi } from 'vitest';
import { fixtureText, recordedSnapshot } from '../../../test-support/fixtures';
import { Conversation, registerConversationNodes } from './Conversation';
import { anchored, firstAnchored } from './reveal';

describe('the anchor keys', () => {
  it('the first anchored place is the first turn with a key, else its first call', () => {
    const content = document.createElement('div');
    content.innerHTML = `
      <article class="qc-turn" data-turn-id="">
        <div data-chat-anchor-key="call:a" data-chat-call-id="a"></div>
      </article>
      <article class="qc-turn" data-turn-id="t2" data-chat-anchor-key="turn:t2"></article>`;
    const first = firstAnchored(content);
    expect(first?.key).toBe('call:a');
    expect(first?.element).toBe(content.querySelector('[data-chat-call-id="a"]'));
    content.querySelector('[data-turn-id=""]')?.remove();
    expect(firstAnchored(content)?.key).toBe('turn:t2');
    content.innerHTML = '<article class="qc-turn"></article>';
    expect(firstAnchored(content)).toBeUndefined();
  });

  it('a place is found by its key alone, quotes and all', () => {
    const content = document.createElement('div');
    content.innerHTML = `<li data-chat-anchor-key='call:x"1' data-chat-call-id='x"1'></li>`;
    expect(anchored(content, 'call:x"1')).toBe(content.firstElementChild);
    expect(anchored(content, 'call:x')).toBeUndefined();
  });
});

describe('paging', () => {
  /** The height every turn takes in this test's layout. */
  const TURN = 300;

  /**
   * A layout for jsdom, which has none: turns stacked `TURN` apart in the scroller's content, a
   * call 40 px into its turn, the content moved up by the scroller's offset.
   */
  function stackedLayout() {
    const box = (top: number, height: number) =>
      ({ top, bottom: top + height, height, y: top, x: 0, left: 0, right: 0, width: 0 }) as DOMRect;
    return vi.spyOn(Element.prototype, 'getBoundingClientRect').mockImplementation(function (
      this: Element,
    ) {
      const offset = document.querySelector('.qc-transcript')?.scrollTop ?? 0;
      if (this.classList.contains('qc-transcript__content')) return box(-offset, 10_000);
      const turn = this.closest('[data-turn-id]');
      if (turn === null) return box(0, 0);
      const index = [...document.querySelectorAll('[data-turn-id]')].indexOf(turn);
      return box(index * TURN + (this === turn ? 0 : 40) - offset, this === turn ? TURN : 20);
    });
  }

  it('the first turn stays where the reader saw it while the earlier page is put above it', async () => {
    stackedLayout();
    const model = new ConversationStore();
    const events = fixtureText('interrupts.jsonl')
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    model.seed(recordedSnapshot('interrupts', 2), events[0]);
    const earlier = recordedSnapshot('interrupts', 0).turns.slice(0, 2);
    let finish = () => {};
    const loadEarlier = () =>
      new Promise<void>((resolve) => {
        finish = () => {
          model.prepend({ firstTurn: 0, turns: earlier });
          resolve();
        };
      });
    function Live() {
      const snapshot = useSyncExternalStore(model.subscribe, model.getSnapshot);
      return <Conversation snapshot={snapshot} loadEarlier={loadEarlier} />;
    }
    const registry = new SlotRegistry();
    registerBuiltinToolViews({ slots: registry });
    registerConversationNodes(registry);
    const { container, getByRole } = render(
      <I18nProvider locale="en">
        <SlotsProvider registry={registry} shared={{ tool: createToolCallHooks(model) }}>
          <Live />
        </SlotsProvider>
      </I18nProvider>,
    );
    const scroller = container.querySelector('.qc-transcript') as HTMLElement;
    Object.defineProperty(scroller, 'scrollHeight', { value: 10_000, configurable: true });
    Object.defineProperty(scroller, 'clientHeight', { value: 800, configurable: true });
    // The reader scrolls up, away from the bottom: the first turn is 100 px above the view.
    scroller.scrollTop = 100;
    fireEvent.scroll(scroller);
    const first = container.querySelector('[data-turn-id]') as HTMLElement;
    const key = first.getAttribute('data-chat-anchor-key');
    expect(key).toMatch(/^turn:/);

    fireEvent.click(getByRole('button', { name: 'Show earlier turns (2)' }));
    await act(async () => finish());
    expect(container.querySelectorAll('[data-turn-id]')).toHaveLength(4);
    // Two turns came above it: the view moved down by their height, so nothing moved on screen.
    expect(scroller.scrollTop).toBe(100 + 2 * TURN);
    expect(first.getBoundingClientRect().top).toBe(-100);
  });
});
