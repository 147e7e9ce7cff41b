import { createHmac } from 'node:crypto';
import type { Output } from '../output.js';

/**
 * `carbon watch --forward-to URL`: each event POSTed to a local app, signed as Stripe signs its
 * webhooks: `Carbon-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">` with the
 * profile's secret. Deliveries are made one at a time, in the order the events were found, so
 * an offset's events arrive in order; a failed one is retried with backoff before the next.
 */

const SIGNATURE_HEADER = 'Carbon-Signature';

function signature(secret: string, body: string, t: number): string {
  return `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${body}`).digest('hex')}`;
}

/** A new signing secret: `whsec_` and 32 random bytes, base64url. */
export async function newSecret(): Promise<string> {
  const { randomBytes } = await import('../../platform/random.js');
  return `whsec_${randomBytes(32).toString('base64url')}`;
}

export const maskSecret = (secret: string): string => `whsec_…${secret.slice(-4)}`;

export interface ForwardOptions {
  url: string;
  secret: string;
  /** The first wait before a retry; each next one doubles, up to 30 s. */
  backoffMs: number;
  /** Retries after the first attempt. */
  retries: number;
  out: Output;
  /** A line on stderr per delivery (a terminal). */
  verbose: boolean;
  sleep: (ms: number) => Promise<void>;
  /** True once the run is stopping (Ctrl-C): no more attempts; the event is sent again next run. */
  stopped: () => boolean;
}

export class Forwarder {
  delivered = 0;
  failed = 0;

  constructor(private readonly options: ForwardOptions) {}

  /** Delivers one event, retrying; false when every attempt failed (said on stderr). */
  async deliver(event: { id: string; type: string; data: { object: { id: string } } }): Promise<boolean> {
    const { url, secret, retries, backoffMs, out } = this.options;
    const body = JSON.stringify(event);
    let last = '';
    for (let attempt = 0; attempt <= retries; attempt++) {
      if (attempt > 0) await this.options.sleep(Math.min(30_000, backoffMs * 2 ** (attempt - 1)));
      if (attempt > 0 && this.options.stopped()) return false;
      try {
        // Signed per attempt: the timestamp says when this attempt was made, for the receiver's tolerance.
        const res = await fetch(url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            [SIGNATURE_HEADER]: signature(secret, body, Math.floor(Date.now() / 1000)),
            'user-agent': 'carbon-watch',
          },
          body,
          signal: AbortSignal.timeout(10_000),
        });
        await res.arrayBuffer();
        if (res.ok) {
          this.delivered++;
          if (this.options.verbose) out.info(`→ ${event.type} ${event.data.object.id} [${res.status}]`);
          return true;
        }
        last = `HTTP ${res.status}`;
      } catch (err) {
        last = (err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : (err as Error).message;
      }
    }
    this.failed++;
    out.warn(
      `${event.type} ${event.id} for ${event.data.object.id} was not delivered to ${url} after ${retries + 1} attempts (${last}); the next events go on.`,
    );
    return false;
  }
}
