import { message, type Message } from '@qilin-agent/i18n';
import type { CallState, WebPageSummaryProps } from '@qilin-agent/ui-primitives';
import { Fields, Unsupported, type CardInput } from './common';
import { genericModel, type GenericModel } from './generic';
import { endedBadly, plainBody, stateOf, type PlainBody } from './outcome';

/** The card of a `web_fetch` call. */
export interface WebModel {
  readonly kind: 'web';
  readonly state: CallState;
  /** The address, for the row. */
  readonly summary?: string;
  /** The status, for the row. */
  readonly suffix?: Message;
  /** The page, or a failed call's plain card. */
  readonly body?: { readonly kind: 'page'; readonly page: WebPageSummaryProps } | PlainBody;
}

/** The first Markdown heading of a page's text, as its title. */
function headingOf(markdown: string): string | undefined {
  const heading = /^#{1,3} +(.+)$/m.exec(markdown);
  return heading?.[1]?.trim();
}

/** An address without its scheme, for a row. */
function shortAddress(url: string): string {
  return url.replace(/^https?:\/\//, '');
}

/** The web card: the page's title, address, status, type and size, and the start of its text. */
export function webModel(input: CardInput): WebModel | GenericModel {
  const state = stateOf(input);
  if (input.phase === 'preparing') return { kind: 'web', state };
  try {
    const args = new Fields(input.arguments, 'arguments');
    const url = args.text('url');
    const raw = args.optionalFlag('raw') ?? false;
    const base = { kind: 'web' as const, state, summary: shortAddress(url) };
    if (input.result === undefined) return base;
    if (endedBadly(input)) return { ...base, body: plainBody(input) };
    const output = new Fields(input.result.output, 'output');
    const status = output.count('status');
    const content = output.text('content');
    const title = raw ? undefined : headingOf(content);
    return {
      ...base,
      suffix: message('web.status', { status }),
      body: {
        kind: 'page',
        page: {
          url: output.text('url'),
          status,
          contentType: output.text('content_type'),
          bytes: output.count('bytes'),
          content,
          truncated: output.flag('truncated'),
          source: raw,
          ...(title === undefined ? {} : { title }),
        },
      },
    };
  } catch (error) {
    if (error instanceof Unsupported) return genericModel(input);
    throw error;
  }
}
