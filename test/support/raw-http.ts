import { connect, type Socket } from 'node:net';

/**
 * HTTP at the byte level, for requests no well-behaved client would send: malformed request
 * lines, bodies that never end, headers sent one byte a second. Loopback only.
 */

export interface RawResult {
  /** Everything the server sent. */
  raw: string;
  status: number | null;
  headers: Record<string, string>;
  body: string;
  /** The server closed the connection (rather than our timeout ending the wait). */
  closedByServer: boolean;
  /** Milliseconds from connect to close (or to the timeout). */
  elapsedMs: number;
}

function parseRaw(raw: string): Pick<RawResult, 'status' | 'headers' | 'body'> {
  const end = raw.indexOf('\r\n\r\n');
  const head = end === -1 ? raw : raw.slice(0, end);
  const [statusLine = '', ...lines] = head.split('\r\n');
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(statusLine);
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const i = line.indexOf(':');
    if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  return { status: m ? Number(m[1]) : null, headers, body: end === -1 ? '' : raw.slice(end + 4) };
}

/**
 * Connects to 127.0.0.1:`port`, lets `script` write (it may wait between writes), and collects
 * the answer until the server closes the connection or `timeoutMs` passes.
 */
export function rawExchange(
  port: number,
  script: string | Buffer | ((socket: Socket) => Promise<void> | void),
  timeoutMs = 5_000,
): Promise<RawResult> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let settled = false;
    const finish = (closedByServer: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      const raw = Buffer.concat(chunks).toString('utf8');
      resolve({ raw, ...parseRaw(raw), closedByServer, elapsedMs: Date.now() - started });
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    socket.on('data', (d) => chunks.push(d));
    socket.on('end', () => finish(true));
    socket.on('close', () => finish(true));
    // A reset after the answer still counts as the server closing.
    socket.on('error', (err: NodeJS.ErrnoException) => (err.code === 'ECONNRESET' || err.code === 'EPIPE' ? finish(true) : reject(err)));
    socket.on('connect', () => {
      if (typeof script === 'function') {
        Promise.resolve(script(socket)).catch((err: unknown) => (settled ? undefined : reject(err)));
      } else {
        socket.write(script);
      }
    });
  });
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
