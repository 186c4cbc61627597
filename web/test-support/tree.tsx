// Test helpers: one recorded call rendered through the call tree, as the conversation shows it.
import { I18nProvider, type Locale } from '@qilin-agent/i18n';
import { foldEvents, type ToolNode } from '@qilin-agent/protocol';
import { SlotRegistry, SlotsProvider } from '@qilin-agent/slots';
import { fireEvent, render } from '@testing-library/react';
import { registerBuiltinToolViews, ToolCallTree } from '@qilin-agent/client-ui-tool';
import { CWD, HOME } from './calls';
import { fixtureEvents } from './fixtures';

/** A call as it was at the end of the log, or just before its result (`running`). */
export function nodeOf(
  fixture: string,
  callId: string,
  moment: 'done' | 'running' = 'done',
): ToolNode {
  const events = fixtureEvents(fixture);
  const end =
    moment === 'done'
      ? events.length
      : events.findIndex((event) => event.type === 'tool.result' && event.callId === callId);
  if (end < 0) throw new Error(`${fixture} has no result of ${callId}`);
  const fold = foldEvents(events.slice(0, end));
  let node = fold.call(callId);
  if (node === undefined) throw new Error(`${fixture} has no call ${callId}`);
  while (node.parentCallId !== undefined) node = fold.call(node.parentCallId) as ToolNode;
  return node;
}

/**
 * Renders the root call of `callId` (the built-in views, the fixtures' folders unless told) and
 * returns the card of `callId` itself: its row, its toggle, and `expand()`.
 */
export function renderCall(
  fixture: string,
  callId: string,
  options: {
    moment?: 'done' | 'running';
    locale?: Locale;
    registry?: SlotRegistry;
    cwd?: string;
    home?: string;
    openFile?: (path: string) => void;
    inspect?: (callId: string) => void;
  } = {},
) {
  const registry = options.registry ?? new SlotRegistry();
  if (options.registry === undefined) registerBuiltinToolViews({ slots: registry });
  render(
    <I18nProvider locale={options.locale ?? 'en'}>
      <SlotsProvider registry={registry}>
        <ToolCallTree
          node={nodeOf(fixture, callId, options.moment)}
          cwd={options.cwd ?? CWD}
          home={options.home ?? HOME}
          {...(options.openFile === undefined ? {} : { openFile: options.openFile })}
          {...(options.inspect === undefined ? {} : { inspect: options.inspect })}
        />
      </SlotsProvider>
    </I18nProvider>,
  );
  const wrapper = document.querySelector(`[data-chat-call-id="${callId}"]`) as HTMLElement;
  const card = wrapper.querySelector(':scope > .qt-card') as HTMLElement;
  const row = card.querySelector(':scope > .qp-row') as HTMLElement;
  const toggle = row.querySelector<HTMLButtonElement>('button.qp-row__main');
  return {
    card,
    row,
    toggle,
    expand: () => {
      if (toggle === null) throw new Error(`${callId} does not expand`);
      fireEvent.click(toggle);
      return card;
    },
  };
}

/** The state a row's dot announces, or `null` when the row shows none. */
export function announcedState(row: HTMLElement): string | null {
  return row.querySelector('.qp-dot[role="img"]')?.getAttribute('aria-label') ?? null;
}
