import { act, render, screen } from '@testing-library/react';
import { createElement } from 'react';
import { describe, expect, test } from 'vitest';
import { SlotError, SlotRegistry } from './registry';
import { Slot, SlotsProvider, useSlotShared } from './react';
import { checkShared } from './shared';

declare module './index' {
  interface SlotPropsMap {
    'test.greeting': { name: string };
    'test.other': { name: string };
  }
  interface SlotShared {
    test: { prefix: string; shout: (text: string) => string };
  }
}

const Hello = ({ name }: { name: string }) => <p>hello {name}</p>;
const Bonjour = ({ name }: { name: string }) => <p>bonjour {name}</p>;
const Fallback = ({ name }: { name: string }) => <p>fallback {name}</p>;

describe('SlotRegistry', () => {
  test('looks a view up by key; the last registration wins and disposing restores the previous', () => {
    const slots = new SlotRegistry();
    expect(slots.lookup('test.greeting', 'en')).toBeUndefined();
    const first = slots.register({ name: 'test.greeting', key: 'en' }, Hello);
    const second = slots.register({ name: 'test.greeting', key: 'en' }, Bonjour);
    expect(slots.lookup('test.greeting', 'en')).toBe(Bonjour);
    second();
    second();
    expect(slots.lookup('test.greeting', 'en')).toBe(Hello);
    first();
    expect(slots.lookup('test.greeting', 'en')).toBeUndefined();
    expect(slots.keys('test.greeting')).toEqual([]);
  });

  test('inject groups a package’s registrations for one slot and refuses another slot', () => {
    const slots = new SlotRegistry();
    const dispose = slots.inject('test.greeting', () =>
      slots.register({ name: 'test.greeting', key: 'fr' }, Bonjour),
    );
    expect(slots.keys('test.greeting')).toEqual(['fr']);
    dispose();
    expect(slots.keys('test.greeting')).toEqual([]);
    expect(() =>
      slots.inject('test.greeting', () => slots.register({ name: 'test.other', key: 'x' }, Hello)),
    ).toThrow(/registered a view for slot `test.other`/);
    expect(() => slots.register({ name: 'test.greeting', key: '' }, Hello)).toThrow(SlotError);
  });
});

describe('Slot', () => {
  test('renders the registered view, or the fallback, and follows registrations', () => {
    const slots = new SlotRegistry();
    render(
      <SlotsProvider registry={slots}>
        <Slot name="test.greeting" slotKey="en" fallback={Fallback} props={{ name: 'Ada' }} />
      </SlotsProvider>,
    );
    expect(screen.getByText('fallback Ada')).toBeInTheDocument();
    let dispose = () => {};
    act(() => {
      dispose = slots.register({ name: 'test.greeting', key: 'en' }, Hello);
    });
    expect(screen.getByText('hello Ada')).toBeInTheDocument();
    act(() => dispose());
    expect(screen.getByText('fallback Ada')).toBeInTheDocument();
  });

  test('views reach shared hooks and host data', () => {
    const slots = new SlotRegistry();
    function Shouting({ name }: { name: string }) {
      const shared = useSlotShared('test');
      return <p>{shared.shout(`${shared.prefix} ${name}`)}</p>;
    }
    slots.register({ name: 'test.greeting', key: 'loud' }, Shouting);
    const shared = { test: { prefix: 'hi', shout: (text: string) => text.toUpperCase() } };
    render(
      <SlotsProvider registry={slots} shared={shared}>
        <Slot name="test.greeting" slotKey="loud" fallback={Fallback} props={{ name: 'Ada' }} />
      </SlotsProvider>,
    );
    expect(screen.getByText('HI ADA')).toBeInTheDocument();
  });

  test('a slot outside a provider says what to do', () => {
    expect(() =>
      render(<Slot name="test.greeting" slotKey="en" fallback={Fallback} props={{ name: 'x' }} />),
    ).toThrow(/outside <SlotsProvider>/);
  });
});

describe('shared data', () => {
  test('plain data and functions pass', () => {
    expect(() =>
      checkShared({ host: { cwd: '/w', open: () => undefined, list: [1, { a: null }] } }),
    ).not.toThrow();
  });

  test('a React node or a runtime service is refused with its path', () => {
    expect(() => checkShared({ host: { banner: createElement('b') } })).toThrow(
      'shared.host.banner is a React element',
    );
    class Store {
      readonly items: string[] = [];
    }
    expect(() => checkShared({ host: { items: [new Store()] } })).toThrow(
      'shared.host.items[0] is an instance of Store',
    );
    expect(() => checkShared({ when: new Date() })).toThrow('shared.when is an instance of Date');
  });
});
