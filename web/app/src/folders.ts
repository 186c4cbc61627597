import { useEffect, useState } from 'react';
import { api } from './api';

/** Where a session's paths are shortened from: its working folder and the user's home. */
export interface SessionFolders {
  /** The folder the session's tools work in (absolute). */
  readonly cwd?: string;
  /** The home folder of the user the server runs as (absolute), for `~/…`. */
  readonly home?: string;
}

/**
 * A session's folders, as the server's view of it gives them (`workspace`, `home`); empty until
 * it answers, and when it cannot (paths then show as the calls gave them).
 */
export function useSessionFolders(sessionId: string): SessionFolders {
  const [folders, setFolders] = useState<{ sessionId: string } & SessionFolders>({ sessionId });
  useEffect(() => {
    let current = true;
    api.session(sessionId).then(
      (view) => {
        if (!current) return;
        setFolders({
          sessionId,
          cwd: view.workspace,
          ...(view.home === undefined ? {} : { home: view.home }),
        });
      },
      // The page works without them: summaries then show paths whole.
      () => undefined,
    );
    return () => {
      current = false;
    };
  }, [sessionId]);
  // Another session's folders never apply, even for the moment before the new ones arrive.
  return folders.sessionId === sessionId ? folders : {};
}
