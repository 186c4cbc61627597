// The tool cards' copy lives in the conversation's own locale namespace: the transcript's
// labels, the tool titles, the row chrome and the primitives' labels are one dictionary, one
// namespace, one placeholder syntax. A host's i18next instance holding that namespace alone
// renders all of it; any label looked up elsewhere (another namespace, a key it lacks) fails.
import {
  createToolCallHooks,
  registerBuiltinToolViews,
  type ToolCallShared,
} from '@qilin-agent/client-ui-tool';
import { I18nProvider, LOCALES, NAMESPACE, catalogues, type Locale } from '@qilin-agent/i18n';
import { ConversationStore } from '@qilin-agent/protocol';
import { SlotRegistry, SlotsProvider } from '@qilin-agent/slots';
import { fireEvent, render } from '@testing-library/react';
import i18next from 'i18next';
import { initReactI18next } from 'react-i18next';
import { describe, expect, test } from 'vitest';
import { fixtureText } from '../../../test-support/fixtures';
import { Conversation, registerConversationNodes } from './Conversation';
import { CallTrajectory } from './Trajectory';

/** Recorded sessions that show every kind of transcript item and most cards. */
const FIXTURES = ['review', 'code-mode', 'shell', 'terminals', 'interrupts', 'tasks', 'compacted'];

/** A host's instance with the conversation namespace only; every lookup it lacks is recorded. */
function hostInstance(locale: Locale, missing: string[]) {
  const instance = i18next.createInstance();
  void instance.use(initReactI18next).init({
    lng: locale,
    fallbackLng: false,
    ns: [NAMESPACE],
    defaultNS: NAMESPACE,
    resources: { [locale]: { [NAMESPACE]: catalogues[locale] } },
    keySeparator: false,
    nsSeparator: false,
    interpolation: { escapeValue: false },
    initAsync: false,
    saveMissing: true,
    missingKeyHandler: (_languages, namespace, key) => missing.push(`${namespace}:${key}`),
  });
  return instance;
}

describe('one locale namespace for the transcript and its tool cards', () => {
  test.each(LOCALES)('every label of every recorded session is in it (%s)', (locale) => {
    const missing: string[] = [];
    const instance = hostInstance(locale, missing);
    for (const fixture of FIXTURES) {
      const model = new ConversationStore();
      model.push(
        fixtureText(`${fixture}.jsonl`)
          .split('\n')
          .filter((line) => line.trim() !== '')
          .map((line) => JSON.parse(line) as Record<string, unknown>),
      );
      const registry = new SlotRegistry();
      registerBuiltinToolViews({ slots: registry });
      registerConversationNodes(registry);
      const shared: { tool: ToolCallShared } = { tool: createToolCallHooks(model) };
      const snapshot = model.getSnapshot();
      const firstCall = snapshot.tree.turns
        .flatMap((turn) => turn.items)
        .find((item) => item.type === 'tool');
      const view = render(
        <I18nProvider i18n={instance}>
          <SlotsProvider registry={registry} shared={shared}>
            <Conversation snapshot={snapshot} cwd="/home/qilin/workspace" />
            {firstCall?.type === 'tool' ? (
              <CallTrajectory
                snapshot={snapshot}
                callId={firstCall.node.callId}
                inspect={() => undefined}
                onClose={() => undefined}
              />
            ) : null}
          </SlotsProvider>
        </I18nProvider>,
      );
      // Every card open, so that the labels of the details show too.
      for (const toggle of view.container.querySelectorAll<HTMLButtonElement>(
        'button.qp-row__main[aria-expanded="false"]',
      )) {
        fireEvent.click(toggle);
      }
      const text = view.container.textContent ?? '';
      expect(text, `${fixture}: a placeholder left unfilled`).not.toMatch(/\{\{\s*\w+/);
      view.unmount();
    }
    expect(missing).toEqual([]);
  });

  test('a label looked up outside the namespace is caught', () => {
    const missing: string[] = [];
    const instance = hostInstance('en', missing);
    instance.t('conversation.turn.you', { ns: 'ui-conversation' });
    instance.t('no.such.label');
    expect(missing).toEqual([
      'ui-conversation:conversation.turn.you',
      'conversation:no.such.label',
    ]);
  });
});
