import { readFileSync } from 'node:fs';
import { type AddressInfo, connect, createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { TLSSocket } from 'node:tls';

/**
 * A PostgreSQL front on loopback, in front of the test database, whose SSL is what a test needs
 * whatever the test database's own `ssl` setting:
 * - `ssl-only`: SSL with the certificate of ./tls (self-signed, for the host `db.carbon.invalid`,
 *   valid 2020–2120), and a connection without SSL refused as pg_hba.conf's `hostssl` lines do
 *   (28000, "no encryption");
 * - `no-ssl`: the SSL request answered `N`, as a server with `ssl = off` does.
 * What passes is forwarded, decrypted, to the test database. `sessions` counts the connections
 * that reached it, by whether they were encrypted.
 */
const TLS_DIR = join(import.meta.dirname, 'tls');
export const TLS_CERT = join(TLS_DIR, 'server.crt');
export const TLS_KEY = join(TLS_DIR, 'server.key');

/** The SSLRequest message: length 8, code 80877103. */
const SSL_REQUEST = Buffer.from([0, 0, 0, 8, 4, 210, 22, 47]);

function refusal(message: string): Buffer {
  const fields = Buffer.from(`SFATAL\0VFATAL\0C28000\0M${message}\0\0`);
  const head = Buffer.alloc(5);
  head.write('E');
  head.writeInt32BE(fields.length + 4, 1);
  return Buffer.concat([head, fields]);
}

export interface TlsProxy {
  /** The test database's URL with the proxy's host and port, and `query` appended. */
  url(query: string): string;
  sessions: { encrypted: number; plain: number };
  close(): Promise<void>;
}

export async function tlsProxy(databaseUrl: string, mode: 'ssl-only' | 'no-ssl'): Promise<TlsProxy> {
  const target = new URL(databaseUrl);
  const sessions = { encrypted: 0, plain: 0 };
  const sockets = new Set<Socket>();
  const forward = (client: Socket | TLSSocket, first: Buffer | null, encrypted: boolean) => {
    sessions[encrypted ? 'encrypted' : 'plain']++;
    const upstream = connect(Number(target.port || 5432), target.hostname);
    sockets.add(upstream);
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
    if (first !== null) upstream.write(first);
    client.pipe(upstream).pipe(client);
  };
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.once('data', (first) => {
      socket.pause();
      const asksSsl = first.subarray(0, 8).equals(SSL_REQUEST);
      const rest = first.subarray(asksSsl ? 8 : 0);
      if (!asksSsl && mode === 'ssl-only') {
        socket.end(refusal('no pg_hba.conf entry for host "127.0.0.1", user "carbon", database "carbon", no encryption'));
      } else if (asksSsl && mode === 'ssl-only') {
        socket.write('S');
        const tls = new TLSSocket(socket, { isServer: true, key: readFileSync(TLS_KEY), cert: readFileSync(TLS_CERT) });
        tls.on('error', () => socket.destroy());
        tls.once('secure', () => forward(tls, null, true));
      } else {
        if (asksSsl) socket.write('N');
        forward(socket, rest.length > 0 ? rest : null, false);
      }
      socket.resume();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url(query) {
      const u = new URL(databaseUrl);
      u.host = `127.0.0.1:${port}`;
      for (const [name, value] of new URLSearchParams(query)) u.searchParams.set(name, value);
      return u.toString();
    },
    sessions,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
