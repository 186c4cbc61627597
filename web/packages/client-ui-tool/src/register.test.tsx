// A business package writes its tool view against the package's public names, and registers it
// the documented way: `ctx.slots.inject` around `ctx.slots.register`.
import {
  ToolCallTree,
  ToolRow,
  registerBuiltinToolViews,
  type ToolCallOwnerProps,
} from '@qilin-agent/client-ui-tool';
import { I18nProvider } from '@qilin-agent/i18n';
import type { ToolNode } from '@qilin-agent/protocol';
import { SlotRegistry, SlotsProvider, type SlotContext } from '@qilin-agent/slots';
import { act, render, screen, within } from '@testing-library/react';
import { describe, expect, test } from 'vitest';

/** A business package's own row for its `deploy_site` tool. */
function BusinessToolRow(props: ToolCallOwnerProps) {
  const target =
    props.phase === 'preparing'
      ? undefined
      : String((props.start.arguments as { target?: unknown }).target);
  const state =
    props.phase === 'preparing'
      ? 'preparing'
      : props.phase === 'start'
        ? 'running'
        : props.result.status === 'ok'
          ? 'ok'
          : 'error';
  return (
    <ToolRow
      callId={props.callId}
      host={props}
      state={state}
      icon="tool"
      title="Deploy"
      summary={target}
    />
  );
}

function deployCall(callId: string, parentCallId?: string): ToolNode {
  return {
    callId,
    toolName: 'deploy_site',
    caller: parentCallId === undefined ? 'direct' : 'code',
    ...(parentCallId === undefined ? {} : { parentCallId }),
    phase: 'done',
    arguments: { target: 'production' },
    presentation: { action: 'Deploy', remark: 'production' },
    progress: '',
    requests: [],
    outcome: { status: 'ok', content: [{ type: 'text', text: 'deployed' }], durationMs: 3 },
    subCalls: [],
  };
}

/** `run_code` whose code deployed: the business view must answer for the nested call too. */
const NESTED: ToolNode = {
  ...deployCall('call_2'),
  toolName: 'run_code',
  arguments: { code: 'sdk.tool.call("deploy_site", {"target": "production"})' },
  outcome: {
    status: 'ok',
    content: [{ type: 'text', text: '(the code printed nothing and returned None)' }],
    output: { printed: '', value: null, tool_calls: 1 },
    durationMs: 5,
  },
  subCalls: [deployCall('call_2.1', 'call_2')],
};

describe('registering a business view', () => {
  test('the seed’s form — ctx.slots.inject around ctx.slots.register — works as written', () => {
    const ctx: SlotContext = { slots: new SlotRegistry() };
    registerBuiltinToolViews(ctx);
    const dispose = ctx.slots.inject('tool.call.toolview', () =>
      ctx.slots.register(
        {
          name: 'tool.call.toolview',
          key: 'deploy_site',
        },
        BusinessToolRow,
      ),
    );
    render(
      <I18nProvider locale="en">
        <SlotsProvider registry={ctx.slots}>
          <ToolCallTree node={deployCall('call_1')} />
          <ToolCallTree node={NESTED} />
        </SlotsProvider>
      </I18nProvider>,
    );
    const root = document.querySelector('[data-chat-call-id="call_1"]') as HTMLElement;
    expect(within(root).getByText('Deploy')).toBeInTheDocument();
    expect(within(root).getByText('production')).toBeInTheDocument();
    const nested = document.querySelector('[data-chat-call-id="call_2.1"]') as HTMLElement;
    expect(within(nested).getByText('Deploy')).toBeInTheDocument();
    expect(screen.queryByText('Tool call · deploy_site')).toBeNull();

    act(() => dispose());
    expect(screen.getAllByText('Tool call · deploy_site')).toHaveLength(2);
  });
});
