// Auto review as a reader sees it: the denial card of a call the reviewer model refused (who
// refused, the reason, "Allow this call" and what it becomes), and the quiet mark on a call
// review let run, root or nested under run_code.
import { act, fireEvent, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import type { Locale } from '@qilin-agent/i18n';
import type { AutoReviewRecord, ErrorCode, ReviewGrant, ToolNode } from '@qilin-agent/protocol';
import { SlotRegistry, SlotsProvider } from '@qilin-agent/slots';
import { describe, expect, test, vi } from 'vitest';
import { renderWithI18n } from '../../../../test-support/render';
import { registerBuiltinToolViews } from '../register';
import { ToolCallTree } from '../tree/ToolCallTree';

const REVIEWER = 'scripted:reviewer.yaml';

function judged(verdict: AutoReviewRecord['verdict'], userReason: string): AutoReviewRecord {
  return {
    reviewer: REVIEWER,
    verdict,
    ...(verdict === 'allow' ? { risk: 'low' as const } : {}),
    ...(verdict === 'deny' ? { risk: 'high' as const } : {}),
    userReason,
    latencyMs: 7,
    inputTokens: 300,
    outputTokens: 40,
    ...(verdict === 'failed' || verdict === 'timed_out'
      ? { fallback: 'unattended_policy' as const }
      : {}),
  };
}

/** A bash call `callId` with `review`; refused with `code` when given, else it ran. */
function bash(
  callId: string,
  review: AutoReviewRecord | undefined,
  code?: ErrorCode,
  extra: Partial<ToolNode> = {},
): ToolNode {
  return {
    callId,
    toolName: 'bash',
    caller: extra.parentCallId === undefined ? 'direct' : 'code',
    phase: 'done',
    arguments: { command: 'git push origin main' },
    progress: '',
    requests: [],
    ...(review === undefined ? {} : { review }),
    outcome:
      code === undefined
        ? { status: 'ok', content: [{ type: 'text', text: 'pushed' }], durationMs: 30 }
        : {
            status: 'denied',
            errorCode: code,
            content: [{ type: 'text', text: 'Pushing is not allowed. Do not retry.' }],
            ...(review === undefined ? {} : { userReason: review.userReason }),
            durationMs: 0,
          },
    subCalls: [],
    ...extra,
  };
}

function render(
  node: ToolNode,
  options: {
    locale?: Locale;
    allowCall?: (callId: string) => Promise<void>;
    grants?: ReadonlyMap<string, ReviewGrant>;
    allowedCalls?: ReadonlySet<string>;
  } = {},
) {
  const registry = new SlotRegistry();
  registerBuiltinToolViews({ slots: registry });
  const tree = (grants: ReadonlyMap<string, ReviewGrant> | undefined) => (
    <SlotsProvider registry={registry}>
      <ToolCallTree
        node={node}
        {...(options.allowCall === undefined ? {} : { allowCall: options.allowCall })}
        {...(grants === undefined ? {} : { grants })}
        {...(options.allowedCalls === undefined ? {} : { allowedCalls: options.allowedCalls })}
      />
    </SlotsProvider>
  );
  const rendered = renderWithI18n(tree(options.grants), options.locale ?? 'en');
  return {
    ...rendered,
    regrant: (grants: ReadonlyMap<string, ReviewGrant>) => rendered.rerender(tree(grants)),
  };
}

/** The row of `callId` itself. */
function rowOf(container: HTMLElement, callId: string): HTMLElement {
  const row = container.querySelector<HTMLElement>(
    `[data-chat-call-id="${callId}"] > .qt-card > .qp-row`,
  );
  if (row === null) throw new Error(`no row for ${callId}`);
  return row;
}

const GRANT: ReviewGrant = {
  id: 'grant-1',
  callId: 'call_1',
  toolName: 'bash',
  arguments: { command: 'git push origin main' },
  grantedAt: '2026-11-30T17:05:16.123Z',
};

describe('the denial card of a call the reviewer model refused', () => {
  test('shows who refused, the risk and the reason; "Allow this call" becomes "Allowed"', async () => {
    const user = userEvent.setup();
    let finish: () => void = () => {};
    const allowCall = vi.fn(
      () =>
        new Promise<void>((resolve) => {
          finish = resolve;
        }),
    );
    const node = bash(
      'call_1',
      judged('deny', 'pushing\npublishes the work'),
      'AUTO_REVIEW_DENIED',
    );
    const { container } = render(node, { allowCall });
    const row = rowOf(container, 'call_1');
    expect(row).toHaveTextContent('Tool call · bash · Auto review: denied');
    expect(row).toHaveTextContent('high risk');
    // Opened: the reason for the person, on one line, and who judged it; never the model's text.
    fireEvent.click(within(row).getByRole('button', { expanded: false }));
    expect(container.querySelector('.qt-denied')?.textContent).toBe(
      'Not run: pushing publishes the work',
    );
    expect(container).toHaveTextContent(`Judged by ${REVIEWER} in 7 ms`);
    expect(container).not.toHaveTextContent('Do not retry');
    // The control, by keyboard: focus it, press Enter.
    const allow = within(row).getByRole('button', { name: 'Allow this call' });
    allow.focus();
    await user.keyboard('{Enter}');
    expect(allowCall).toHaveBeenCalledWith('call_1');
    expect(allow).toHaveTextContent('Allowing…');
    expect(allow).toHaveAttribute('aria-busy', 'true');
    // A second press while it is sent does not send twice.
    await user.keyboard('{Enter}');
    expect(allowCall).toHaveBeenCalledTimes(1);
    await act(async () => finish());
    expect(allow).toHaveTextContent('Allowed');
    expect(allow).toHaveAttribute('aria-disabled', 'true');
    expect(allow).toBe(document.activeElement);
    await user.click(allow);
    expect(allowCall).toHaveBeenCalledTimes(1);
  });

  test('a refusal the host could not undo is said, and the control can be tried again', async () => {
    const user = userEvent.setup();
    const allowCall = vi
      .fn<(callId: string) => Promise<void>>()
      .mockRejectedValueOnce(new Error('the call was not refused by the reviewer'))
      .mockResolvedValueOnce(undefined);
    const node = bash('call_1', judged('deny', 'no'), 'AUTO_REVIEW_DENIED');
    const { container } = render(node, { allowCall });
    await user.click(screen.getByRole('button', { name: 'Allow this call' }));
    expect(await screen.findByRole('alert')).toHaveTextContent(
      'The call was not allowed: the call was not refused by the reviewer',
    );
    await user.click(screen.getByRole('button', { name: 'Allow this call' }));
    expect(screen.queryByRole('alert')).toBeNull();
    expect(rowOf(container, 'call_1')).toHaveTextContent('Allowed');
  });

  test('a grant already in the log shows "Allowed" from the start', () => {
    const node = bash('call_1', judged('deny', 'no'), 'AUTO_REVIEW_DENIED');
    const allowCall = vi.fn(async () => {});
    const { regrant } = render(node, { allowCall });
    expect(screen.getByRole('button', { name: 'Allow this call' })).not.toHaveAttribute(
      'aria-disabled',
      'true',
    );
    regrant(new Map([['call_1', GRANT]]));
    expect(screen.getByRole('button', { name: 'Allowed' })).toHaveAttribute(
      'aria-disabled',
      'true',
    );
  });

  test('a call the host lists as allowed reads "Allowed" without a grant in the tree', () => {
    const node = bash('call_1', judged('deny', 'no'), 'AUTO_REVIEW_DENIED');
    render(node, { allowCall: vi.fn(async () => {}), allowedCalls: new Set(['call_1']) });
    expect(screen.getByRole('button', { name: 'Allowed' })).toHaveAttribute(
      'aria-disabled',
      'true',
    );
  });

  test('failed and timed-out reviews have their own titles, and may be allowed', () => {
    const allowCall = vi.fn(async () => {});
    const failed = render(
      bash('call_2', judged('failed', 'the reviewer answered no verdict'), 'AUTO_REVIEW_FAILED'),
      { allowCall },
    );
    expect(rowOf(failed.container, 'call_2')).toHaveTextContent('Auto review failed');
    expect(
      within(rowOf(failed.container, 'call_2')).getByRole('button', { name: 'Allow this call' }),
    ).toBeVisible();
    failed.unmount();
    const late = render(
      bash('call_3', judged('timed_out', 'no answer in 90 s'), 'AUTO_REVIEW_TIMEOUT'),
      { allowCall, locale: 'zh-CN' },
    );
    const row = rowOf(late.container, 'call_3');
    expect(row).toHaveTextContent('自动审查超时');
    expect(within(row).getByRole('button', { name: '允许此次调用' })).toBeVisible();
  });

  test('no control for a rule\u2019s denial, nor without the host\u2019s callback', () => {
    const rule = render(bash('call_4', undefined, 'AUTO_REVIEW_DENIED'), {
      allowCall: vi.fn(async () => {}),
    });
    expect(rowOf(rule.container, 'call_4')).toHaveTextContent('Tool call · bash · Auto review');
    expect(screen.queryByRole('button', { name: 'Allow this call' })).toBeNull();
    rule.unmount();
    render(bash('call_1', judged('deny', 'no'), 'AUTO_REVIEW_DENIED'));
    expect(screen.queryByRole('button', { name: 'Allow this call' })).toBeNull();
  });
});

describe('the reviewed mark', () => {
  test('a call the reviewer allowed shows its risk, the reason as tooltip and name', () => {
    const { container } = render(bash('call_5', judged('allow', 'pushing to a\nfeature branch')));
    const row = rowOf(container, 'call_5');
    const mark = within(row).getByRole('img', {
      name: `Allowed by auto review (${REVIEWER}), low risk: pushing to a feature branch`,
    });
    expect(mark).toHaveTextContent('reviewed · low risk');
    expect(mark).toHaveAttribute('title', mark.getAttribute('aria-label'));
    // The card is the shell card still, with its own title.
    expect(row).toHaveTextContent('git push origin main');
  });

  test('nested under run_code, in Chinese', () => {
    const child = bash('call_6.1', judged('allow', 'tests only'), undefined, {
      parentCallId: 'call_6',
    });
    const parent: ToolNode = {
      callId: 'call_6',
      toolName: 'run_code',
      caller: 'direct',
      phase: 'done',
      arguments: { code: 'sdk.tool.call("bash", command="cargo test")' },
      progress: '',
      requests: [],
      outcome: { status: 'ok', content: [{ type: 'text', text: 'ok' }], durationMs: 90 },
      subCalls: [child],
    };
    const { container } = render(parent, { locale: 'zh-CN' });
    expect(within(rowOf(container, 'call_6')).queryByRole('img', { name: /自动审查/ })).toBeNull();
    const mark = within(rowOf(container, 'call_6.1')).getByRole('img', {
      name: `自动审查（${REVIEWER}）已允许，低风险：tests only`,
    });
    expect(mark).toHaveTextContent('已审查 · 低风险');
  });

  test('a review that failed and asked a person, and a retry that ran by a grant', () => {
    const asked = render(bash('call_7', judged('timed_out', 'no answer in 90 s')));
    expect(
      within(rowOf(asked.container, 'call_7')).getByRole('img', {
        name: `Auto review (${REVIEWER}) timed out, so you were asked: no answer in 90 s`,
      }),
    ).toHaveTextContent('review timed out');
    asked.unmount();
    const retry = render(bash('call_8', undefined), {
      grants: new Map([['call_8', { ...GRANT, usedBy: 'call_8' }]]),
    });
    expect(
      within(rowOf(retry.container, 'call_8')).getByRole('img', {
        name: 'Run because you allowed it after review refused it',
      }),
    ).toHaveTextContent('allowed by you');
  });

  test('a call nobody reviewed has no mark', () => {
    const { container } = render(bash('call_9', undefined));
    expect(container.querySelector('.qt-review-mark')).toBeNull();
  });
});
