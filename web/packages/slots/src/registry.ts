import type { SlotPropsMap } from './index';
import type { ComponentType } from 'react';

/** A declared slot's name. */
export type SlotName = keyof SlotPropsMap & string;

/** Where a view goes: a slot and the key it answers for (for tool views, a wire tool name). */
export interface SlotEntry<N extends SlotName = SlotName> {
  /** The slot's name. */
  name: N;
  /** The key the view answers for. */
  key: string;
}

/** A view registered for a slot. */
export type SlotView<N extends SlotName> = ComponentType<SlotPropsMap[N]>;

/** A registration that breaks the slot rules, with what to do instead. */
export class SlotError extends Error {
  override name = 'SlotError';
}

type AnyView = ComponentType<never>;
type Listener = () => void;

/**
 * Views by slot name and key. The last registration of a key wins; disposing it brings the
 * previous one back, so a business package can override a built-in view and step away again.
 */
export class SlotRegistry {
  private readonly slots = new Map<string, Map<string, AnyView[]>>();
  private readonly listeners = new Set<Listener>();
  private version = 0;
  private injecting: string | undefined;

  /** Registers `view` for `entry.key` in slot `entry.name`; returns the function that removes it. */
  register<N extends SlotName>(entry: SlotEntry<N>, view: SlotView<N>): () => void {
    if (entry.key === '')
      throw new SlotError(`a view for slot \`${entry.name}\` needs a non-empty key`);
    if (this.injecting !== undefined && this.injecting !== entry.name) {
      throw new SlotError(
        `a setup injected into slot \`${this.injecting}\` registered a view for slot \`${entry.name}\`; inject it into \`${entry.name}\` instead`,
      );
    }
    let keys = this.slots.get(entry.name);
    if (keys === undefined) {
      keys = new Map();
      this.slots.set(entry.name, keys);
    }
    const stack = keys.get(entry.key) ?? [];
    const registered = view as AnyView;
    stack.push(registered);
    keys.set(entry.key, stack);
    this.changed();
    let disposed = false;
    return () => {
      if (disposed) return;
      disposed = true;
      const current = this.slots.get(entry.name)?.get(entry.key);
      const at = current?.lastIndexOf(registered) ?? -1;
      if (current !== undefined && at >= 0) {
        current.splice(at, 1);
        if (current.length === 0) this.slots.get(entry.name)?.delete(entry.key);
        this.changed();
      }
    };
  }

  /**
   * Runs `setup`, which registers views for slot `name` only, and returns the function that
   * undoes it: a business package's registrations as one unit.
   */
  inject<N extends SlotName>(name: N, setup: () => (() => void) | undefined): () => void {
    const outer = this.injecting;
    this.injecting = name;
    let dispose: (() => void) | undefined;
    try {
      dispose = setup();
    } finally {
      this.injecting = outer;
    }
    return () => dispose?.();
  }

  /** The view registered last for `key` in slot `name`. */
  lookup<N extends SlotName>(name: N, key: string): SlotView<N> | undefined {
    const stack = this.slots.get(name)?.get(key);
    return stack?.[stack.length - 1] as SlotView<N> | undefined;
  }

  /** The keys with a view in slot `name`. */
  keys(name: SlotName): string[] {
    return [...(this.slots.get(name)?.keys() ?? [])];
  }

  /** Hears every registration and removal. */
  subscribe = (listener: Listener): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  /** A number that changes with every registration and removal. */
  getVersion = (): number => this.version;

  private changed(): void {
    this.version += 1;
    this.listeners.forEach((listener) => listener());
  }
}

/**
 * What a package's registration function receives: the slots of the client it plugs into.
 * A package registers its views as one injected unit and hands back the disposer:
 *
 * ```ts
 * export function registerDeployViews(ctx: SlotContext): () => void {
 *   return ctx.slots.inject('tool.call.toolview', () =>
 *     ctx.slots.register({ name: 'tool.call.toolview', key: 'deploy_site' }, DeployRow),
 *   );
 * }
 * ```
 */
export interface SlotContext {
  /** The client's slot registry. */
  readonly slots: SlotRegistry;
}
