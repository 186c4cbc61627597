// Run by scripts/package-check.mjs inside a fresh app that installed the packed packages: it
// imports them by their published names only, registers a business view the documented way,
// renders recorded calls to HTML in both locales and fails on anything missing.
import {
  TOOL_VIEW_SLOT,
  ToolCallTree,
  ToolRow,
  registerBuiltinToolViews,
  type StartedToolCallViewProps,
  type ToolCallOwnerProps,
} from '@qilin-agent/client-ui-tool';
import { I18nProvider, LOCALES, type Locale } from '@qilin-agent/i18n';
import { foldEvents, readEventLog, type ToolNode } from '@qilin-agent/protocol';
import { SlotRegistry, SlotsProvider, type SlotContext } from '@qilin-agent/slots';
import { hasSpillNotice } from '@qilin-agent/spill-policy/notice';
import { MarkdownText, registerConversationNodes } from '@qilin-agent/ui-conversation';
import { registerSkillView } from '@qilin-agent/ui-skill';
import { existsSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderToString } from 'react-dom/server';

/** What the business row of `table_query` shows once the call started. */
function tableOf(props: StartedToolCallViewProps): string {
  return String((props.start.arguments as { table?: unknown }).table);
}

/** A business package's row for its `table_query` tool, on the package's own `ToolRow`. */
function TableQueryRow(props: ToolCallOwnerProps) {
  return (
    <ToolRow
      callId={props.callId}
      host={props}
      state={props.phase === 'result' ? 'ok' : 'running'}
      icon="tool"
      title="Business table query"
      summary={props.phase === 'preparing' ? undefined : tableOf(props)}
    />
  );
}

const failures: string[] = [];
function check(condition: boolean, what: string) {
  if (!condition) failures.push(what);
}

/** Every call of a tree, the root first. */
function callsOf(node: ToolNode): ToolNode[] {
  return [node, ...node.subCalls.flatMap(callsOf)];
}

const ctx: SlotContext = { slots: new SlotRegistry() };
registerBuiltinToolViews(ctx);
registerConversationNodes(ctx.slots);
registerSkillView(ctx);
ctx.slots.inject(TOOL_VIEW_SLOT, () =>
  ctx.slots.register({ name: TOOL_VIEW_SLOT, key: 'table_query' }, TableQueryRow),
);

const titles: Record<Locale, { runCode: string; shell: string }> = {
  en: { runCode: 'Run code', shell: 'Shell' },
  'zh-CN': { runCode: '运行代码', shell: 'Shell' },
};
for (const fixture of ['code-mode', 'shell']) {
  const log = readEventLog(readFileSync(new URL(`./${fixture}.jsonl`, import.meta.url), 'utf8'));
  const roots = foldEvents(log.events)
    .tree()
    .turns.flatMap((turn) => turn.items)
    .flatMap((item) => (item.type === 'tool' ? [item.node] : []));
  check(roots.length > 0, `${fixture}: no call in the recorded log`);
  for (const locale of LOCALES) {
    const html = roots
      .map((node) =>
        renderToString(
          <I18nProvider locale={locale}>
            <SlotsProvider registry={ctx.slots}>
              <ToolCallTree node={node} cwd="/work/project" home="/home/user" />
            </SlotsProvider>
          </I18nProvider>,
        ),
      )
      .join('\n');
    for (const call of roots.flatMap(callsOf)) {
      const wrappers = html.split(`data-chat-call-id="${call.callId}"`).length - 1;
      check(wrappers === 1, `${fixture} (${locale}): ${wrappers} wrappers of ${call.callId}`);
    }
    const expected = fixture === 'shell' ? titles[locale].shell : titles[locale].runCode;
    check(html.includes(expected), `${fixture} (${locale}): no "${expected}" card`);
    if (fixture === 'code-mode') {
      check(
        html.includes('Business table query'),
        `${fixture} (${locale}): the business view of table_query did not render`,
      );
    }
  }
}

check(
  renderToString(<MarkdownText text="**bold**" />).includes('<strong>bold</strong>'),
  'ui-conversation: MarkdownText did not render Markdown',
);
check(!hasSpillNotice('plain output'), 'spill-policy: a plain output counts as spilled');

// The style sheets resolve by their published names, and what they import is shipped too.
for (const name of ['client-ui-tool', 'ui-primitives', 'ui-conversation']) {
  const sheet = fileURLToPath(import.meta.resolve(`@qilin-agent/${name}/styles.css`));
  const text = readFileSync(sheet, 'utf8');
  check(text.length > 0, `${name}: styles.css is empty`);
  for (const [, imported] of text.matchAll(/@import\s+['"]([^'"]+)['"]/g)) {
    check(
      existsSync(`${dirname(sheet)}/${imported}`),
      `${name}: styles.css imports ${imported}, not shipped`,
    );
  }
}

if (failures.length > 0) {
  console.error(`The installed packages do not work:\n  ${failures.join('\n  ')}`);
  process.exit(1);
}
console.log('The installed packages render the recorded calls in en and zh-CN.');
