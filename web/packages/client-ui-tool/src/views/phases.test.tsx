// The custom views keep the preparing phase apart: while the arguments stream, the row alone;
// once dispatched, a card typed `StartedToolCallViewProps`, which a preparing call cannot
// reach. The type assertions are checked by `npm run typecheck`, the rows by vitest.
import { I18nProvider } from '@qilin-agent/i18n';
import { SlotRegistry, SlotsProvider } from '@qilin-agent/slots';
import { inlineImageLoader } from '@qilin-agent/ui-primitives';
import { render } from '@testing-library/react';
import type { ComponentProps, ComponentType } from 'react';
import { describe, expect, expectTypeOf, test } from 'vitest';
import type {
  PreparingToolCallViewProps,
  StartedToolCallViewProps,
  ToolCallOwnerProps,
} from '../slots';
import type { DispatchedChange } from './change';
import { ChecksRunView, type ChecksRunCard } from './checks';
import { ShellView, type ShellCard } from './shell';
import { TerminalView, type TerminalCard } from './terminal';

/** A call of `toolName` whose arguments are still streaming. */
function preparing(toolName: string): PreparingToolCallViewProps {
  return { phase: 'preparing', callId: 'call_1', toolName, loadImage: inlineImageLoader };
}

describe('a custom view while preparing', () => {
  test.each([
    ['bash', ShellView, 'Shell'],
    ['pwsh', ShellView, 'PowerShell'],
    ['terminal_start', TerminalView, 'Terminal'],
    ['terminal_send', TerminalView, 'Terminal input'],
    ['checks_run', ChecksRunView, 'Checks'],
  ] as const)(
    '%s: its icon and title, nothing from the arguments, nothing to expand',
    (toolName, View: ComponentType<ToolCallOwnerProps>, title) => {
      render(
        <I18nProvider locale="en">
          <SlotsProvider registry={new SlotRegistry()}>
            <View {...preparing(toolName)} />
          </SlotsProvider>
        </I18nProvider>,
      );
      const row = document.querySelector('.qp-row') as HTMLElement;
      expect(row).toHaveAttribute('data-state', 'preparing');
      expect(row.querySelector('.qp-row__title')).toHaveTextContent(title);
      expect(row.querySelector('.qp-row__summary')).toBeNull();
      expect(row.querySelector('.qp-row__suffix')).toBeNull();
      expect(row.querySelector('button')).toBeNull();
    },
  );
});

describe('the cards that read arguments', () => {
  test('take dispatched props only', () => {
    expectTypeOf<ComponentProps<typeof ShellCard>>().toEqualTypeOf<StartedToolCallViewProps>();
    expectTypeOf<ComponentProps<typeof TerminalCard>>().toEqualTypeOf<StartedToolCallViewProps>();
    expectTypeOf<ComponentProps<typeof ChecksRunCard>>().toEqualTypeOf<StartedToolCallViewProps>();
    expectTypeOf<
      ComponentProps<typeof DispatchedChange>['view']
    >().toEqualTypeOf<StartedToolCallViewProps>();
    expectTypeOf<PreparingToolCallViewProps>().not.toExtend<StartedToolCallViewProps>();
  });
});
