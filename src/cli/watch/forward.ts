import { createHmac } from 'node:crypto';
import type { Output } from '../output.js';

/**
 * `carbon watch --forward-to URL`: each event POSTed to a local app, signed as Stripe signs its
 * webhooks: `Carbon-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">` with the
 * profile's secret. Deliveries are made one at a time, in the order the events were found, so
 * an offset's events arrive in order. A failed one is retried with backoff, for as long as the
 * run lasts: an event is never passed by (the run stops with it undelivered instead, and the
 * cursor stays before it). Redirects are not followed: a 3xx is a failed delivery, as the body
 * (an offset's private reference) and its valid signature must not go to another address.
 * Events the sandbox made (the local model, or a `carbon serve`, whose answers carry
 * `Carbon-Sandbox: true`) are forwarded with that header too, so the receiver can tell them from
 * the service's; the service's go without it.
 */

const SIGNATURE_HEADER = 'Carbon-Signature';
const SANDBOX_HEADER = 'Carbon-Sandbox';

/** The longest wait between two attempts at one event. */
const MAX_BACKOFF_MS = 30_000;

/** How long an attempt waits for the receiver's answer: 10 s, and not past the run's deadline (but 1 s at least). */
const ATTEMPT_MS = 10_000;
const LAST_ATTEMPT_MS = 1_000;

function signature(secret: string, body: string, t: number): string {
  return `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${body}`).digest('hex')}`;
}

/** A new signing secret: `whsec_` and 43 random letters and digits (256 bits), which every echo masks (redactSecrets). */
export async function newSecret(): Promise<string> {
  const { randomBase62 } = await import('../../platform/random.js');
  return `whsec_${randomBase62(43)}`;
}

export const maskSecret = (secret: string): string => `whsec_…${secret.slice(-4)}`;

export interface ForwardOptions {
  url: string;
  secret: string;
  /** The first wait before a retry; each next one doubles, up to 30 s. */
  backoffMs: number;
  out: Output;
  /** A line on stderr per delivery (a terminal). */
  verbose: boolean;
  sleep: (ms: number) => Promise<void>;
  /** True once the run is stopping (Ctrl-C, SIGTERM): no more attempts; the event is sent again next run. */
  stopped: () => boolean;
  /** Whether the events come from a sandbox (asked at each attempt: a remote one says so in its answers). */
  sandbox: () => boolean;
  /** Aborted by Ctrl-C or SIGTERM: the attempt under way is given up (the event is sent again next run). */
  interrupted: AbortSignal;
}

type Event = { id: string; type: string; data: { object: { id: string } } };

export class Forwarder {
  delivered = 0;

  constructor(private readonly options: ForwardOptions) {}

  /** The URL as every line shows it: a query's values as `***` (a receiver's token, `?token=…`, would show in each). */
  get url(): string {
    const url = new URL(this.options.url);
    if (url.search === '') return url.href;
    return `${url.origin}${url.pathname}?${[...url.searchParams.keys()].map((name) => `${encodeURIComponent(name)}=***`).join('&')}`;
  }

  /**
   * Delivers one event, retrying with backoff until it is taken (true), or until the run stops or
   * `deadline` (ms since the epoch) passes with it undelivered (false). Each failed attempt is a
   * warning that says what the receiver answered and when the next attempt is.
   */
  async deliver(event: Event, deadline = Number.POSITIVE_INFINITY): Promise<boolean> {
    const { backoffMs, out } = this.options;
    const body = JSON.stringify(event);
    for (let attempt = 1; ; attempt++) {
      const failure = await this.attempt(event, body, Math.min(ATTEMPT_MS, Math.max(LAST_ATTEMPT_MS, deadline - Date.now())));
      if (failure === null) return true;
      if (this.options.stopped()) return false;
      const wait = Math.min(MAX_BACKOFF_MS, backoffMs * 2 ** Math.min(attempt - 1, 30));
      const left = deadline - Date.now();
      const next = left <= 0 ? 'no time is left to retry' : `retrying in ${seconds(Math.min(wait, left))}`;
      out.warn(
        `${event.type} ${event.id} for ${event.data.object.id} was not delivered to ${this.url} (${failure}), attempt ${attempt}; ${next}.`,
      );
      if (left <= 0) return false;
      await this.options.sleep(Math.min(wait, left));
      if (this.options.stopped() || Date.now() >= deadline) return false;
    }
  }

  /** One POST of the event, given up after `ms` or on Ctrl-C: null when the receiver took it (2xx), else what went wrong. */
  private async attempt(event: Event, body: string, ms: number): Promise<string | null> {
    const { url, secret, out, sandbox, interrupted } = this.options;
    try {
      // Signed per attempt: the timestamp says when this attempt was made, for the receiver's tolerance.
      const res = await fetch(url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          [SIGNATURE_HEADER]: signature(secret, body, Math.floor(Date.now() / 1000)),
          'user-agent': 'carbon-watch',
          ...(sandbox() ? { [SANDBOX_HEADER]: 'true' } : {}),
        },
        body,
        redirect: 'manual',
        signal: AbortSignal.any([AbortSignal.timeout(ms), interrupted]),
      });
      await res.arrayBuffer();
      if (res.status >= 200 && res.status < 300) {
        this.delivered++;
        if (this.options.verbose) out.info(`→ ${event.type} ${event.data.object.id} [${res.status}]`);
        return null;
      }
      if (res.status >= 300 && res.status < 400)
        return `HTTP ${res.status}, a redirect: not followed; give --forward-to the address that takes the events`;
      return `HTTP ${res.status}`;
    } catch (err) {
      if ((err as Error).name === 'TimeoutError') return `no answer in ${seconds(ms)}`;
      return (err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : (err as Error).message;
    }
  }
}

/** A wait as a person reads it: 250 ms, 4 s. */
function seconds(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${Math.round(ms / 100) / 10} s`;
}
