import { describe, expect, test } from 'vitest';
import { formatDateTime } from './dates';

describe('formatDateTime', () => {
  const at = '2026-01-01T00:00:00.000Z';

  test('the same moment in the viewer’s zone, which is named', () => {
    const shanghai = formatDateTime(at, 'en', 'Asia/Shanghai');
    expect(shanghai).toContain('Jan 1, 2026');
    expect(shanghai).toContain('08:00:00');
    expect(shanghai).toContain('GMT+8');
    const newYork = formatDateTime(at, 'en', 'America/New_York');
    expect(newYork).toContain('Dec 31, 2025');
    expect(newYork).toContain('07:00:00');
    expect(newYork).toContain('EST');
  });

  test('in Chinese too', () => {
    const text = formatDateTime(at, 'zh-CN', 'Asia/Shanghai');
    expect(text).toContain('2026');
    expect(text).toContain('08:00:00');
    expect(text).toMatch(/GMT\+8|中国标准时间/);
  });

  test('the viewer’s own zone when none is given', () => {
    const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    expect(formatDateTime(at, 'en')).toBe(formatDateTime(at, 'en', zone));
  });

  test('text that is not a time stays as it is', () => {
    expect(formatDateTime('yesterday', 'en')).toBe('yesterday');
  });
});
