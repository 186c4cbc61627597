import { describe, expect, test } from 'vitest';
import { addressHref, clickedSessionLink, sessionAddress } from './links';

const ORIGIN = 'http://127.0.0.1:4000';

describe('session addresses', () => {
  test('a session, at a call or an event, and back', () => {
    expect(sessionAddress('/sessions/s%201', ORIGIN)).toEqual({ id: 's 1' });
    const atCall = sessionAddress('/sessions/s1?at=call%3Acall_1.2', ORIGIN);
    expect(atCall).toEqual({ id: 's1', at: { kind: 'call', callId: 'call_1.2' } });
    expect(sessionAddress(addressHref(atCall), ORIGIN)).toEqual(atCall);
    expect(sessionAddress(`${ORIGIN}/sessions/s1?at=seq:12`, ORIGIN)).toEqual({
      id: 's1',
      at: { kind: 'seq', seq: 12 },
    });
    expect(addressHref(undefined)).toBe('/');
  });

  test('an unreadable place opens the session at its latest turns; other addresses are not sessions', () => {
    expect(sessionAddress('/sessions/s1?at=somewhere', ORIGIN)).toEqual({ id: 's1' });
    for (const href of [
      '/',
      '/sessions/',
      '/sessions/a/b',
      '/sessions/%E0%A4%A',
      'http://elsewhere.test/sessions/s1',
      'http://[bad',
    ]) {
      expect(sessionAddress(href, ORIGIN), href).toBeUndefined();
    }
  });
});

describe('clicks on links', () => {
  function click(html: string, init: MouseEventInit = {}) {
    document.body.innerHTML = html;
    const target = document.querySelector('[data-target]') as HTMLElement;
    const event = new MouseEvent('click', { bubbles: true, cancelable: true, button: 0, ...init });
    Object.defineProperty(event, 'target', { value: target });
    return clickedSessionLink(event, window.location.origin);
  }

  test('a plain click on a link to a session, inside it too, is the page’s', () => {
    expect(click('<a href="/sessions/s1?at=call%3Ac1"><mark data-target>retry</mark></a>')).toEqual(
      {
        id: 's1',
        at: { kind: 'call', callId: 'c1' },
      },
    );
  });

  test('new tabs, modifiers, other buttons and other addresses are the browser’s', () => {
    expect(click('<a href="/sessions/s1" data-target target="_blank">x</a>')).toBeUndefined();
    expect(click('<a href="/sessions/s1" data-target>x</a>', { ctrlKey: true })).toBeUndefined();
    expect(click('<a href="/sessions/s1" data-target>x</a>', { metaKey: true })).toBeUndefined();
    expect(click('<a href="/sessions/s1" data-target>x</a>', { button: 1 })).toBeUndefined();
    expect(click('<a href="https://example.com/" data-target>x</a>')).toBeUndefined();
    expect(click('<span data-target>x</span>')).toBeUndefined();
  });
});
