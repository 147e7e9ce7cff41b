import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A fault-injection HTTP proxy on loopback, between a client and a `carbon serve`. Each request
 * that matches `only` takes the next fault from the plan (then `forward` once the plan is used
 * up); other requests are forwarded untouched.
 *
 * - `forward`: passed to the server and its answer passed back.
 * - `drop`: passed to the server, which processes it; its answer is read in full and thrown
 *   away, and the client's connection is destroyed. The client sees a network error although
 *   the request took effect: a lost response.
 * - `503` / `500` / `{ status }`: answered by the proxy in the error envelope; never forwarded.
 * - `429` / `{ status: 429, retryAfter }`: answered with `Retry-After` (1 s unless given).
 */

export type Fault = 'forward' | 'drop' | '429' | '500' | '503' | { status: number; retryAfter?: number; body?: unknown };

export interface FaultProxyOptions {
  /** The server: an origin or base URL on loopback (its path is kept for `url`). */
  target: string;
  /** The faults, in order, for matching requests; or a function of the matching request's index (0-based). */
  plan: Fault[] | ((index: number, req: IncomingMessage) => Fault);
  /** Which requests the plan applies to; default every request. */
  only?: { method?: string; path?: string | RegExp };
  /** Port to listen on; default a free one. */
  port?: number;
}

interface ProxiedRequest {
  method: string;
  path: string;
  idempotencyKey: string | undefined;
  fault: Fault;
}

export interface FaultProxy {
  /** The target's base URL, through the proxy: http://127.0.0.1:<proxy port>/api/v1. */
  url: string;
  origin: string;
  /** Every request the proxy received, in order. */
  requests: ProxiedRequest[];
  /** Replaces the plan; its index starts again at 0. */
  setPlan(plan: FaultProxyOptions['plan']): void;
  close(): Promise<void>;
}

const LOOPBACK = /^(127(\.\d{1,3}){3}|localhost|\[::1\])$/;

function envelopeFor(status: number): { error: { type: string; code: string; message: string } } {
  if (status === 429) return { error: { type: 'rate_limit_error', code: 'rate_limited', message: 'Too many requests (fault proxy).' } };
  if (status === 503) return { error: { type: 'api_error', code: 'service_unavailable', message: 'Service unavailable (fault proxy).' } };
  return { error: { type: 'api_error', code: 'internal_error', message: `Status ${status} (fault proxy).` } };
}

function respond(res: ServerResponse, status: number, body: unknown, retryAfter?: number): void {
  const text = JSON.stringify(body);
  const headers: Record<string, string | number> = {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(text),
    'Request-Id': `req_faultproxy${Date.now()}`,
  };
  if (retryAfter !== undefined) headers['Retry-After'] = String(retryAfter);
  res.writeHead(status, headers);
  res.end(text);
}

export async function startFaultProxy(options: FaultProxyOptions): Promise<FaultProxy> {
  const target = new URL(options.target);
  if (!LOOPBACK.test(target.hostname)) throw new Error(`the fault proxy only forwards to loopback, not ${target.hostname}`);
  const targetPort = Number(target.port || 80);
  const basePath = target.pathname.replace(/\/+$/, '');
  let plan = options.plan;
  let index = 0;
  const requests: ProxiedRequest[] = [];

  const matches = (req: IncomingMessage): boolean => {
    const only = options.only;
    if (!only) return true;
    if (only.method && req.method?.toUpperCase() !== only.method.toUpperCase()) return false;
    const path = (req.url ?? '/').split('?')[0]!;
    if (typeof only.path === 'string' && path !== only.path) return false;
    if (only.path instanceof RegExp && !only.path.test(path)) return false;
    return true;
  };

  const nextFault = (req: IncomingMessage): Fault => {
    if (!matches(req)) return 'forward';
    const i = index++;
    return typeof plan === 'function' ? plan(i, req) : (plan[i] ?? 'forward');
  };

  const server = createServer((req, res) => {
    const fault = nextFault(req);
    const idem = req.headers['idempotency-key'];
    requests.push({
      method: req.method ?? 'GET',
      path: (req.url ?? '/').split('?')[0]!,
      idempotencyKey: Array.isArray(idem) ? idem[0] : idem,
      fault,
    });

    if (fault !== 'forward' && fault !== 'drop') {
      const spec = typeof fault === 'string' ? { status: Number(fault) } : fault;
      const retryAfter =
        spec.status === 429
          ? (('retryAfter' in spec ? spec.retryAfter : undefined) ?? 1)
          : 'retryAfter' in spec
            ? spec.retryAfter
            : undefined;
      // Read the request to its end before answering, as a real server would.
      req.resume();
      req.on('end', () =>
        respond(res, spec.status, 'body' in spec && spec.body !== undefined ? spec.body : envelopeFor(spec.status), retryAfter),
      );
      return;
    }

    const upstream = httpRequest(
      {
        host: target.hostname.replace(/^\[|\]$/g, ''),
        port: targetPort,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: target.host },
        agent: false,
      },
      (answer) => {
        if (fault === 'drop') {
          // The server has done the work; the client never hears of it.
          answer.resume();
          answer.on('end', () => req.socket.destroy());
          return;
        }
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => {
      if (!res.headersSent) respond(res, 502, envelopeFor(502));
      else res.destroy();
    });
    req.pipe(upstream);
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const origin = `http://127.0.0.1:${port}`;
  return {
    url: `${origin}${basePath}`,
    origin,
    requests,
    setPlan(next) {
      plan = next;
      index = 0;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
