import { isValidElement } from 'react';
import { SlotError } from './registry';

const isPlainObject = (value: object): boolean => {
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
};

/**
 * Checks that shared data holds only plain data and functions (host callbacks, hooks): no
 * React node, which would render outside its owner, and no class instance, which would hand
 * views a runtime service. Throws a [`SlotError`] naming the first offending path.
 */
export function checkShared(value: unknown, path = 'shared'): void {
  if (value === null || typeof value !== 'object') return;
  if (isValidElement(value)) {
    throw new SlotError(
      `${path} is a React element; slots share data and callbacks, not rendered nodes — pass what the view needs to render it`,
    );
  }
  if (Array.isArray(value)) {
    value.forEach((item, index) => checkShared(item, `${path}[${index}]`));
    return;
  }
  if (!isPlainObject(value)) {
    const kind = (value as { constructor?: { name?: string } }).constructor?.name ?? 'an object';
    throw new SlotError(
      `${path} is an instance of ${kind}; slots share plain data and functions, not runtime services — pass the values or a callback instead`,
    );
  }
  for (const [key, item] of Object.entries(value)) checkShared(item, `${path}.${key}`);
}
