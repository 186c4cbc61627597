import type { Locale } from '@qilin-agent/i18n';
import { createContext, useContext } from 'react';

const EN = {
  'app.sessions': 'Sessions',
  'app.newSession': 'New session',
  'app.search': 'Search sessions by title',
  'app.noSessions': 'No sessions yet.',
  'app.untitled': 'Untitled session',
  'app.pick': 'Pick a session on the left, or start a new one.',
  'app.language': 'Language',
  'app.theme': 'Theme',
  'app.theme.system': 'System',
  'app.theme.light': 'Light',
  'app.theme.dark': 'Dark',
  'app.rename': 'Rename',
  'app.delete': 'Delete',
  'app.deleteConfirm': 'Delete this session and all its events?',
  'app.renamePrompt': 'New title',
  'auth.missing':
    'This page needs the token `qilin serve` printed: open the whole URL it printed (with its #token=…).',
  'stream.connecting': 'Connecting…',
  'stream.reconnecting': 'Reconnecting…',
  'stream.ended': 'This session was deleted.',
  'session.model': 'Model',
  'session.agent': 'Agent',
  'composer.label': 'Prompt',
  'composer.placeholder': 'Ask Qilin… (Enter sends, Shift+Enter for a new line)',
  'composer.send': 'Send',
  'composer.stop': 'Stop',
  'composer.busy': 'A turn is running: wait for it to end, or stop it.',
  'composer.offline': 'Not connected to the server.',
  'composer.failed': 'Not sent: {message}',
  'file.label': 'File preview: {path}',
  'file.close': 'Close the preview',
  'file.loading': 'Loading {path}…',
  'file.failed': 'Cannot show {path}: {message}',
  'file.lines': '{lines} lines · {size} bytes',
  'file.cut': 'The first {shown} lines are shown.',
} as const;

/** A key of the page's own labels. */
export type AppMessageKey = keyof typeof EN;

const ZH: Record<AppMessageKey, string> = {
  'app.sessions': '会话',
  'app.newSession': '新建会话',
  'app.search': '按标题搜索会话',
  'app.noSessions': '还没有会话。',
  'app.untitled': '未命名会话',
  'app.pick': '在左侧选择一个会话，或新建一个。',
  'app.language': '语言',
  'app.theme': '主题',
  'app.theme.system': '跟随系统',
  'app.theme.light': '浅色',
  'app.theme.dark': '深色',
  'app.rename': '重命名',
  'app.delete': '删除',
  'app.deleteConfirm': '删除此会话及其全部事件？',
  'app.renamePrompt': '新标题',
  'auth.missing': '此页面需要 `qilin serve` 打印的令牌：请打开它打印的完整网址（带 #token=…）。',
  'stream.connecting': '连接中…',
  'stream.reconnecting': '正在重新连接…',
  'stream.ended': '此会话已被删除。',
  'session.model': '模型',
  'session.agent': 'Agent',
  'composer.label': '提示',
  'composer.placeholder': '向 Qilin 提问…（Enter 发送，Shift+Enter 换行）',
  'composer.send': '发送',
  'composer.stop': '停止',
  'composer.busy': '本轮正在运行：请等待结束，或停止它。',
  'composer.offline': '未连接到服务器。',
  'composer.failed': '未发送：{message}',
  'file.label': '文件预览：{path}',
  'file.close': '关闭预览',
  'file.loading': '正在加载 {path}…',
  'file.failed': '无法显示 {path}：{message}',
  'file.lines': '{lines} 行 · {size} 字节',
  'file.cut': '只显示前 {shown} 行。',
};

const TABLES: Record<Locale, Record<AppMessageKey, string>> = { en: EN, 'zh-CN': ZH };

/** Translates a label of the page. */
export type AppTranslate = (key: AppMessageKey, values?: Record<string, string>) => string;

/** The page's locale. */
export const AppLocale = createContext<Locale>('en');

/** The page's translate function, in the surrounding locale. */
export function useAppT(): AppTranslate {
  const table = TABLES[useContext(AppLocale)];
  return (key, values) =>
    table[key].replace(/\{(\w+)\}/g, (whole, name: string) => values?.[name] ?? whole);
}
