/**
 * Where a request of a parent session came from, when a child's call opened it: the child's
 * session id and its name (its agent when it has none). `request.opened` carries both, and the
 * fold keeps them on the request node, so a request card can name the child and link to it.
 */
export interface RequestOrigin {
  /** The child session whose call opened the request. */
  readonly childSessionId?: string;
  /** The child's name, or its agent when it has none. */
  readonly childName?: string;
}

/** The child a request or `request.opened` event came from, read from its optional fields. */
export function requestOrigin(value: object): RequestOrigin {
  const fields = value as Readonly<Record<string, unknown>>;
  const id = fields['childSessionId'];
  const name = fields['childName'];
  return {
    ...(typeof id === 'string' && id.trim() !== '' ? { childSessionId: id } : {}),
    ...(typeof name === 'string' && name.trim() !== '' ? { childName: name } : {}),
  };
}
