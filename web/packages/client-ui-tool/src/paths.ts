/** `folder` without trailing slashes (the root stays `/`). */
function trimFolder(folder: string): string {
  const trimmed = folder.replace(/\/+$/, '');
  return trimmed === '' ? '/' : trimmed;
}

/** The part of `path` below `folder`, or `undefined` when it is not inside. */
function below(path: string, folder: string): string | undefined {
  const base = trimFolder(folder);
  if (path === base) return '';
  const prefix = base === '/' ? '/' : `${base}/`;
  return path.startsWith(prefix) ? path.slice(prefix.length) : undefined;
}

/**
 * A path as a summary shows it: relative to the session's working folder when inside it
 * (`.` for the folder itself), else with the home folder written `~`. Relative paths, paths
 * elsewhere and non-POSIX paths are left as they are. Only for display: `openFile` and the
 * host always get the original path.
 */
export function shortenPath(path: string, cwd?: string, home?: string): string {
  if (!path.startsWith('/')) return path;
  if (cwd !== undefined && cwd.startsWith('/')) {
    const inside = below(path, cwd);
    if (inside !== undefined) return inside === '' ? '.' : inside;
  }
  if (home !== undefined && home.startsWith('/') && trimFolder(home) !== '/') {
    const inside = below(path, home);
    if (inside !== undefined) return inside === '' ? '~' : `~/${inside}`;
  }
  return path;
}
