import {
  createContext,
  useContext,
  useMemo,
  useSyncExternalStore,
  type ComponentType,
  type ReactNode,
} from 'react';
import { SlotError, type SlotName, type SlotRegistry, type SlotView } from './registry';
import { checkShared } from './shared';
import type { SlotPropsMap, SlotShared } from './index';

interface SlotContextValue {
  registry: SlotRegistry;
  shared: Partial<SlotShared>;
}

const SlotContext = createContext<SlotContextValue | null>(null);

/**
 * Provides a registry and the shared hooks and host data to every slot below. `shared` is
 * checked once per change: plain data and functions only.
 */
export function SlotsProvider(props: {
  registry: SlotRegistry;
  shared?: Partial<SlotShared>;
  children: ReactNode;
}) {
  const { registry, shared, children } = props;
  const value = useMemo(() => {
    const given = shared ?? {};
    checkShared(given);
    return { registry, shared: given };
  }, [registry, shared]);
  return <SlotContext.Provider value={value}>{children}</SlotContext.Provider>;
}

function useSlotContext(): SlotContextValue {
  const value = useContext(SlotContext);
  if (value === null) {
    throw new SlotError('a slot is used outside <SlotsProvider>; wrap the view tree in one');
  }
  return value;
}

/** The registry of the nearest provider. */
export function useSlotRegistry(): SlotRegistry {
  return useSlotContext().registry;
}

/** The view registered for `key` in slot `name` (following later registrations). */
export function useSlotView<N extends SlotName>(name: N, key: string): SlotView<N> | undefined {
  const { registry } = useSlotContext();
  const version = useSyncExternalStore(
    registry.subscribe,
    registry.getVersion,
    registry.getVersion,
  );
  // eslint-disable-next-line react-hooks/exhaustive-deps -- `version` stands for the registry's content
  return useMemo(() => registry.lookup(name, key), [registry, name, key, version]);
}

/** One group of the shared hooks and host data; throws when the host did not provide it. */
export function useSlotShared<K extends keyof SlotShared>(group: K): SlotShared[K] {
  const value = useSlotContext().shared[group];
  if (value === undefined) {
    throw new SlotError(
      `the shared group \`${String(group)}\` is missing; give it to <SlotsProvider shared>`,
    );
  }
  return value as SlotShared[K];
}

/** One group of the shared hooks and host data, or `fallback` when the host did not provide it. */
export function useSlotSharedOr<K extends keyof SlotShared>(
  group: K,
  fallback: SlotShared[K],
): SlotShared[K] {
  const value = useContext(SlotContext)?.shared[group];
  return (value ?? fallback) as SlotShared[K];
}

/** Renders the view registered for `key` in slot `name`, or `fallback` when there is none. */
export function Slot<N extends SlotName>(props: {
  name: N;
  slotKey: string;
  fallback: ComponentType<SlotPropsMap[N]>;
  props: SlotPropsMap[N];
}) {
  const View = useSlotView(props.name, props.slotKey) ?? props.fallback;
  const Component = View as ComponentType<SlotPropsMap[N] & object>;
  return <Component {...(props.props as SlotPropsMap[N] & object)} />;
}
