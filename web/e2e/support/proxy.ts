// An HTTP proxy between the page and `qilin serve` that can drop the page's live event streams
// while the server keeps running: the network failing, not the server.
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** A running proxy. */
export interface StreamCutter {
  /** The proxy's origin (`http://127.0.0.1:PORT`): open the page here. */
  readonly origin: string;
  /** How many event streams were opened through the proxy so far. */
  readonly streamsOpened: number;
  /** Kills every live event stream and refuses new ones until [`resume`] (connections reset). */
  cut(): void;
  /** Lets event streams through again. */
  resume(): void;
  /** Stops the proxy. */
  close(): Promise<void>;
}

const isStream = (incoming: IncomingMessage) => /\/events\/stream(\?|$)/.test(incoming.url ?? '');

/**
 * Starts a proxy to `target` (the server's origin). Requests are passed on with `Host` and
 * `Origin` naming the server, as if the page were its own; answers stream back as they come.
 */
export async function startStreamCutter(target: string): Promise<StreamCutter> {
  const upstream = new URL(target);
  const live = new Set<Socket>();
  let blocked = false;
  let opened = 0;
  let ownOrigin = '';
  const server: Server = createServer((incoming, outgoing) => {
    const stream = isStream(incoming);
    if (stream && blocked) {
      incoming.socket.destroy();
      return;
    }
    if (stream) opened += 1;
    const headers = { ...incoming.headers, host: upstream.host };
    if (headers.origin === ownOrigin) headers.origin = upstream.origin;
    const forward = request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: incoming.method,
        path: incoming.url,
        headers,
      },
      (answer) => {
        outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
        outgoing.flushHeaders();
        answer.pipe(outgoing);
      },
    );
    forward.on('error', () => outgoing.destroy());
    incoming.pipe(forward);
    if (stream) {
      const socket = incoming.socket;
      live.add(socket);
      socket.once('close', () => {
        live.delete(socket);
        forward.destroy();
      });
    }
  });
  await new Promise<void>((ready) => server.listen(0, '127.0.0.1', ready));
  ownOrigin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin: ownOrigin,
    get streamsOpened() {
      return opened;
    },
    cut() {
      blocked = true;
      for (const socket of live) socket.destroy();
      live.clear();
    },
    resume() {
      blocked = false;
    },
    close: () =>
      new Promise<void>((done) => {
        for (const socket of live) socket.destroy();
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}
