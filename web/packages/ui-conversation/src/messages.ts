import type { Locale } from '@qilin-agent/i18n';
import { createContext, useContext } from 'react';

/** The conversation's own labels, in English; every locale has the same keys. */
const EN = {
  'transcript.label': 'Conversation',
  'transcript.empty': 'No messages yet. Write a prompt below to start.',
  'transcript.latest': 'Jump to the latest',
  'turn.you': 'You',
  'turn.assistant': 'Qilin',
  'turn.running': 'Working…',
  'turn.finished.completed': 'Turn completed',
  'turn.finished.max_steps': 'Turn stopped: step limit reached',
  'turn.finished.interrupted': 'Turn interrupted',
  'turn.finished.max_tokens': 'Turn stopped: output token limit reached',
  'turn.finished.refused': 'The model refused',
  'turn.finished.error': 'Turn failed',
  'turn.usage': '{input} in · {output} out · {cached} cached tokens',
  'request.approval': 'Approval needed: {tool}',
  'request.question': 'Question',
  'request.allow': 'Allow once',
  'request.deny': 'Deny',
  'request.denyReason': 'Reason for denying (told to the model)',
  'request.submit': 'Send answer',
  'request.dismiss': 'Dismiss',
  'request.freeText': 'Your answer',
  'request.other': 'Other answer (optional)',
  'request.sending': 'Sending…',
  'request.failed': 'Could not send the answer: {message}',
  'request.resolved.approved': 'Allowed by {who}',
  'request.resolved.denied': 'Denied by {who}',
  'request.resolved.answered': 'Answered by {who}',
  'request.resolved.dismissed': 'Dismissed by {who}',
  'request.resolved.cancelled': 'Cancelled',
  'trajectory.title': 'Trajectory of {tool}',
  'trajectory.close': 'Close the trajectory',
  'trajectory.missing': 'The call {callId} is not in this conversation.',
  'trajectory.status.preparing': 'Preparing: the model is writing the arguments',
  'trajectory.status.running': 'Running',
  'trajectory.status.waiting': 'Waiting for a person to answer',
  'trajectory.status.ok': 'Done',
  'trajectory.status.error': 'Failed',
  'trajectory.status.denied': 'Denied',
  'trajectory.status.interrupted': 'Interrupted',
  'trajectory.position': 'Position',
  'trajectory.turn': 'Turn',
  'trajectory.turnValue': 'turn {n}',
  'trajectory.step': 'Step',
  'trajectory.order': 'Order',
  'trajectory.orderRoot': 'call {index} of {count} in its step',
  'trajectory.orderNested': 'call {index} of {count} made by {tool}',
  'trajectory.entry': 'Entry',
  'trajectory.entry.direct': 'called by the model',
  'trajectory.entry.code': 'called from code',
  'trajectory.parent': 'Made by',
  'trajectory.timing': 'Timing',
  'trajectory.named': 'Named',
  'trajectory.started': 'Started',
  'trajectory.ended': 'Ended',
  'trajectory.notYet': 'not yet',
  'trajectory.duration': 'Duration',
  'trajectory.arguments': 'Arguments',
  'trajectory.noArguments': 'No arguments yet: the call is still being prepared.',
  'trajectory.result': 'Result',
  'trajectory.noResult': 'No result yet.',
  'trajectory.progress': 'Live output',
  'trajectory.progressTail':
    'Latest live output, after {bytes} bytes not shown live (the result holds the whole output)',
  'trajectory.output': 'Structured output',
  'trajectory.block': 'Block {n} ({type})',
  'trajectory.image': 'An image ({type}, about {kb} KB)',
  'trajectory.cut': '{more} more characters not shown.',
  'trajectory.nested': 'Calls made by its code ({count})',
  'trajectory.requests': 'Requests',
  'trajectory.request.approval': 'Approval',
  'trajectory.request.waiting': 'waiting for an answer',
  'trajectory.request.opened': 'opened {at}',
  'trajectory.request.resolved': 'resolved {at}',
  'compaction.label': 'Earlier conversation summarised',
  'compaction.size': '~{before} → ~{after} tokens a request',
  'earlier.show': 'Show earlier turns ({count})',
  'earlier.loading': 'Loading earlier turns…',
  'earlier.failed': 'Could not load the earlier turns: {message}',
  'earlier.retry': 'Try again',
} as const;

/** A key of the conversation's labels. */
export type ConversationMessageKey = keyof typeof EN;

const ZH: Record<ConversationMessageKey, string> = {
  'transcript.label': '对话',
  'transcript.empty': '还没有消息。在下方输入提示开始。',
  'transcript.latest': '跳到最新',
  'turn.you': '你',
  'turn.assistant': 'Qilin',
  'turn.running': '处理中…',
  'turn.finished.completed': '本轮完成',
  'turn.finished.max_steps': '本轮停止：达到步数上限',
  'turn.finished.interrupted': '本轮已中断',
  'turn.finished.max_tokens': '本轮停止：达到输出 token 上限',
  'turn.finished.refused': '模型拒绝了请求',
  'turn.finished.error': '本轮出错',
  'turn.usage': '输入 {input} · 输出 {output} · 缓存 {cached} token',
  'request.approval': '需要批准：{tool}',
  'request.question': '问题',
  'request.allow': '允许一次',
  'request.deny': '拒绝',
  'request.denyReason': '拒绝理由（会告诉模型）',
  'request.submit': '发送回答',
  'request.dismiss': '忽略',
  'request.freeText': '你的回答',
  'request.other': '其他回答（可选）',
  'request.sending': '发送中…',
  'request.failed': '回答未能发送：{message}',
  'request.resolved.approved': '{who} 已允许',
  'request.resolved.denied': '{who} 已拒绝',
  'request.resolved.answered': '{who} 已回答',
  'request.resolved.dismissed': '{who} 已忽略',
  'request.resolved.cancelled': '已取消',
  'trajectory.title': '{tool} 的调用轨迹',
  'trajectory.close': '关闭轨迹',
  'trajectory.missing': '此对话中没有调用 {callId}。',
  'trajectory.status.preparing': '准备中：模型正在写参数',
  'trajectory.status.running': '运行中',
  'trajectory.status.waiting': '等待人工回答',
  'trajectory.status.ok': '完成',
  'trajectory.status.error': '失败',
  'trajectory.status.denied': '已拒绝',
  'trajectory.status.interrupted': '已中断',
  'trajectory.position': '位置',
  'trajectory.turn': '轮次',
  'trajectory.turnValue': '第 {n} 轮',
  'trajectory.step': '步骤',
  'trajectory.order': '顺序',
  'trajectory.orderRoot': '本步骤第 {index} 个调用，共 {count} 个',
  'trajectory.orderNested': '{tool} 发起的第 {index} 个调用，共 {count} 个',
  'trajectory.entry': '入口',
  'trajectory.entry.direct': '模型直接调用',
  'trajectory.entry.code': '由代码调用',
  'trajectory.parent': '发起者',
  'trajectory.timing': '时间',
  'trajectory.named': '命名于',
  'trajectory.started': '开始',
  'trajectory.ended': '结束',
  'trajectory.notYet': '尚未结束',
  'trajectory.duration': '耗时',
  'trajectory.arguments': '参数',
  'trajectory.noArguments': '还没有参数：调用仍在准备中。',
  'trajectory.result': '结果',
  'trajectory.noResult': '还没有结果。',
  'trajectory.progress': '实时输出',
  'trajectory.progressTail': '最新的实时输出，此前有 {bytes} 字节未实时显示（结果中有完整输出）',
  'trajectory.output': '结构化输出',
  'trajectory.block': '第 {n} 块（{type}）',
  'trajectory.image': '一张图片（{type}，约 {kb} KB）',
  'trajectory.cut': '还有 {more} 个字符未显示。',
  'trajectory.nested': '其代码发起的调用（{count}）',
  'trajectory.requests': '请求',
  'trajectory.request.approval': '批准',
  'trajectory.request.waiting': '等待回答',
  'trajectory.request.opened': '打开于 {at}',
  'trajectory.request.resolved': '解决于 {at}',
  'compaction.label': '之前的对话已总结',
  'compaction.size': '每次请求约 {before} → {after} token',
  'earlier.show': '显示更早的轮次（{count}）',
  'earlier.loading': '正在加载更早的轮次…',
  'earlier.failed': '无法加载更早的轮次：{message}',
  'earlier.retry': '重试',
};

/** The conversation's labels by locale. */
export const CONVERSATION_MESSAGES: Readonly<
  Record<Locale, Readonly<Record<ConversationMessageKey, string>>>
> = { en: EN, 'zh-CN': ZH };

/** Translates a conversation label, filling `{name}` placeholders. */
export type ConversationTranslate = (
  key: ConversationMessageKey,
  values?: Readonly<Record<string, string | number>>,
) => string;

/** The translate function of `locale`. */
export function conversationTranslator(locale: Locale): ConversationTranslate {
  const table = CONVERSATION_MESSAGES[locale];
  const numbers = new Intl.NumberFormat(locale);
  return (key, values) =>
    table[key].replace(/\{(\w+)\}/g, (whole, name: string) => {
      const value = values?.[name];
      if (value === undefined) return whole;
      return typeof value === 'number' ? numbers.format(value) : value;
    });
}

/** The locale the conversation renders in. */
export const ConversationLocale = createContext<Locale>('en');

const translators = new Map<Locale, ConversationTranslate>();

/** The conversation's translate function, in the surrounding locale. */
export function useConversationT(): ConversationTranslate {
  const locale = useContext(ConversationLocale);
  let translate = translators.get(locale);
  if (translate === undefined) {
    translate = conversationTranslator(locale);
    translators.set(locale, translate);
  }
  return translate;
}
