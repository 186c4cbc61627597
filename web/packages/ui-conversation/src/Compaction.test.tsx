import { I18nProvider } from '@qilin-agent/i18n';
import type { Event } from '@qilin-agent/protocol';
import { SlotRegistry, SlotsProvider } from '@qilin-agent/slots';
import { render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { fixtureText } from '../../../test-support/fixtures';
import { CompactionDivider } from './Compaction';
import { Conversation, registerConversationNodes } from './Conversation';
import { ConversationStore } from '@qilin-agent/protocol';

function recorded(name: string): unknown[] {
  return fixtureText(`${name}.jsonl`)
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as unknown);
}

function renderConversation(model: ConversationStore, locale: 'en' | 'zh-CN' = 'en') {
  const registry = new SlotRegistry();
  registerConversationNodes(registry);
  return render(
    <I18nProvider locale={locale}>
      <SlotsProvider registry={registry}>
        <Conversation snapshot={model.getSnapshot()} />
      </SlotsProvider>
    </I18nProvider>,
  );
}

describe('CompactionDivider', () => {
  it('sits between the turn it follows and the next, its summary folded', async () => {
    const model = new ConversationStore();
    model.push(recorded('compacted'));
    const { container } = renderConversation(model);
    const [first, second] = Array.from(container.querySelectorAll('[data-turn-id]'));
    const divider = screen.getByRole('region', { name: 'Earlier conversation summarised' });
    expect(first?.compareDocumentPosition(divider)).toBe(Node.DOCUMENT_POSITION_FOLLOWING);
    expect(divider.compareDocumentPosition(second as Node)).toBe(Node.DOCUMENT_POSITION_FOLLOWING);
    expect(divider.getAttribute('data-compaction-seq')).toBe('20');
    // The recorded sizes are zeroed in the fixture: none is shown rather than "~0 → ~0".
    expect(within(divider).queryByText(/tokens a request/)).toBeNull();

    const details = divider.querySelector('details');
    expect(details?.open).toBe(false);
    await userEvent.click(within(divider).getByText('Earlier conversation summarised'));
    expect(details?.open).toBe(true);
    // The summary is rendered as Markdown.
    expect(within(divider).getByText('Goal').tagName).toBe('STRONG');
  });

  it('shows the estimated request size before and after, in the reader’s locale', () => {
    const event = {
      seq: 9,
      time: '2026-01-01T00:00:00.000Z',
      type: 'context.compacted',
      summary: 'The user wants the **tests** green.',
      replacesThroughSeq: 8,
      usage: { inputTokens: 41000, outputTokens: 900, cacheReadTokens: 0 },
      estimatedTokensBefore: 41234,
      estimatedTokensAfter: 1200,
    } satisfies Event;
    const model = new ConversationStore();
    model.push([
      { seq: 1, time: event.time, type: 'turn.started', turnId: 'turn-1', prompt: 'Fix it.' },
      { seq: 2, time: event.time, type: 'turn.finished', turnId: 'turn-1', reason: 'completed' },
      { ...event, seq: 3 },
    ]);
    const [compaction] = model.getSnapshot().tree.compactions;
    if (compaction === undefined) throw new Error('the compaction was not folded');
    expect(compaction.afterTurns).toBe(1);
    const { unmount } = render(
      <I18nProvider>
        <CompactionDivider compaction={compaction} />
      </I18nProvider>,
    );
    expect(screen.getByText('~41,234 → ~1,200 tokens a request')).toBeInTheDocument();
    unmount();
    renderConversation(model, 'zh-CN');
    expect(screen.getByRole('region', { name: '之前的对话已总结' })).toBeInTheDocument();
    expect(screen.getByText('每次请求约 41,234 → 1,200 token')).toBeInTheDocument();
  });
});
