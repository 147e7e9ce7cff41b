import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A stub of the offsets API that pages wrongly, as some third-party mocks of the specification
 * do. `GET /api/v1/offsets` answers by `mode`:
 *   - `ignore`: ignores starting_after, so every page is the first one again, with has_more;
 *   - `echo`: the page after a cursor holds the cursor's own offset again, with has_more;
 *   - `dup`: one page whose last offset repeats its first (has_more false);
 *   - `empty`: a page of no offsets that says has_more.
 * Every request is counted, so a test can tell a walk that stopped from one that looped.
 */
export interface RepeatingServer {
  url: string;
  requests: string[];
  close(): Promise<void>;
}

const offset = (n: number) => ({
  id: `off_stub${String(n).padStart(4, '0')}`,
  object: 'offset',
  livemode: false,
  status: 'placed',
  kg: 10,
  amount_cents: 40,
  reference: null,
  created: new Date(Date.UTC(2026, 0, 1) - n * 60_000).toISOString(),
  certificate_url: null,
});

export async function repeatingServer(mode: 'ignore' | 'echo' | 'dup' | 'empty'): Promise<RepeatingServer> {
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    requests.push(req.url ?? '');
    const url = new URL(req.url ?? '/', 'http://stub');
    res.setHeader('content-type', 'application/json');
    if (url.pathname !== '/api/v1/offsets') {
      res.statusCode = 404;
      return res.end(JSON.stringify({ error: { type: 'invalid_request_error', code: 'resource_missing', message: 'stub' } }));
    }
    const after = url.searchParams.get('starting_after');
    const data =
      mode === 'empty'
        ? []
        : mode === 'dup'
          ? [offset(1), offset(2), offset(1)]
          : mode === 'echo' && after !== null
            ? [{ ...offset(3), id: after }]
            : [offset(1), offset(2), offset(3)];
    res.end(JSON.stringify({ object: 'list', data, has_more: mode !== 'dup' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/api/v1`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
