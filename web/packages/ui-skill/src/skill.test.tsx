import { fireEvent, render, screen } from '@testing-library/react';
import {
  registerBuiltinToolViews,
  ToolCallTree,
  type StartedToolCallViewProps,
} from '@qilin-agent/client-ui-tool';
import { I18nProvider } from '@qilin-agent/i18n';
import { SlotRegistry, SlotsProvider } from '@qilin-agent/slots';
import type { ComponentProps } from 'react';
import { describe, expect, expectTypeOf, test } from 'vitest';
import { callOf, inputAt } from '../../../test-support/calls';
import { registerSkillView, type SkillCard } from './index';
import { skillModel } from './model';

describe('the skill card', () => {
  test('says which skill and file were read', () => {
    expect(skillModel(inputAt(callOf('tasks', 'call_1')))).toMatchObject({
      kind: 'skill',
      name: 'release-notes',
      files: ['reference/style.md'],
    });
    expect(skillModel(inputAt(callOf('tasks', 'call_2')))).toMatchObject({
      name: 'release-notes',
      file: 'reference/style.md',
      files: [],
    });
    expect(skillModel(inputAt(callOf('tasks', 'call_3')))).toMatchObject({
      state: 'error',
      body: { kind: 'plain' },
    });
    expect(skillModel(inputAt(callOf('tasks', 'call_1'), 'preparing'))).toEqual({
      kind: 'skill',
      state: 'preparing',
    });
  });

  test('is registered from its own package through the slot, and removed again', () => {
    const registry = new SlotRegistry();
    registerBuiltinToolViews({ slots: registry });
    const dispose = registerSkillView({ slots: registry });
    const view = (
      <I18nProvider locale="en">
        <SlotsProvider registry={registry}>
          <ToolCallTree node={callOf('tasks', 'call_2')} />
        </SlotsProvider>
      </I18nProvider>
    );
    const { unmount } = render(view);
    const row = screen.getByRole('button', { name: /Skill/ });
    expect(row).toHaveTextContent('release-notes / reference/style.md');
    fireEvent.click(row);
    expect(screen.getByRole('figure')).toHaveTextContent('Start each line with a verb');
    unmount();
    dispose();
    render(view);
    expect(screen.getByRole('button', { name: /Tool call · skill/ })).toBeInTheDocument();
  });

  test('the card that reads arguments takes dispatched props only (checked by typecheck)', () => {
    expectTypeOf<ComponentProps<typeof SkillCard>>().toEqualTypeOf<StartedToolCallViewProps>();
  });
});
