import { API_PREFIX, type ApiRequest, type ApiResponse, type Mode } from '../api/types.js';
import { randomBase62 } from '../platform/random.js';
import { bearerToken, traceCaller } from './access.js';
import { ApiError, type ErrorCode } from './errors.js';
import type { Trace } from './journal-note.js';
import { keyMode, requestId } from './keys.js';
import type { OffsetsService } from './service.js';
import { parseDuration } from './units.js';

/**
 * Faults on demand (`carbon sandbox faults`): a share of the API's requests answered 429, 500 or
 * 503, or cut off before or after the service acts on them, and added latency. The setting lives
 * in the store (one named value), so every `carbon serve` on a shared ledger and every local
 * engine run reads the same one. What happens to one request is drawn here, from a seeded
 * generator: the same seed and the same sequence of requests draw the same faults.
 */

export const FAULT_KINDS = ['429', '500', '503', 'drop-before', 'drop-after'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface FaultConfig {
  /** The share of matching requests (0 to 1) that get one of `errors`. */
  error_rate: number;
  /** The faults drawn from, each as likely as the others. */
  errors: FaultKind[];
  /** Added before a matching request is answered: a whole number of ms drawn from min to max. */
  latency_ms: { min: number; max: number } | null;
  /** Only this endpoint (`POST /offsets`, as the API's route table writes it); null: every one. */
  route: string | null;
  /** Only requests with a key of this mode; null: both. */
  mode: Mode | null;
  /** The generator's seed; null: a random one per process. */
  seed: number | null;
  /** The Retry-After (seconds) of injected 429s and 503s. */
  retry_after_seconds: number;
}

/** What one request gets: a delay, and perhaps a fault. */
export interface Fault {
  latencyMs: number;
  kind: FaultKind | null;
}

/** The store's named value holding the setting (JSON); absent when faults are off. */
export const FAULTS_META = 'sandbox.faults';

/**
 * The setting as stored: its JSON with `set_id`, new at each `faults set` (and snapshot load), so
 * the text changes with every set even when the setting does not. Every instance starts its seeded
 * sequence again when the text changes (FaultDice.use); without the mark, `faults set --seed 7`
 * after `faults off`, or set twice, left an instance that drew before going on mid-sequence
 * (it never read the text in between) while a fresh one started over.
 */
export function storedFaults(config: FaultConfig): string {
  return JSON.stringify({ ...config, set_id: randomBase62(12) });
}

/** The setting in a stored text (its mark left out), or null when off. */
export function parseFaults(text: string | undefined): FaultConfig | null {
  if (text === undefined) return null;
  const { set_id: _, ...config } = JSON.parse(text) as FaultConfig & { set_id?: string };
  return config;
}

/** A stored text marked anew (a snapshot's, loaded: a set like any other); a text that is no setting, as it is. */
export function markedAgain(text: string): string {
  try {
    return storedFaults(parseFaults(text)!);
  } catch {
    return text;
  }
}

/** mulberry32: a small, fast generator; good enough to draw faults, and the same on every platform. */
export function generator(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** `POST /offsets/{id}` → a test of a request's method and path (under /api/v1). */
function routeTest(route: string): (method: string, path: string) => boolean {
  const [method, pattern] = route.split(' ') as [string, string];
  const re = new RegExp(`^${API_PREFIX}${pattern.replace(/\{[^}]+\}/g, '[^/]+')}/?$`);
  return (m, p) => m === method && re.test(p);
}

/**
 * Draws the faults of a sequence of requests. A new setting (another seed, rate or route) starts
 * its sequence again, so a run after `faults set --seed 7` is repeatable from its first request.
 */
export class FaultDice {
  private text = '';
  private config: FaultConfig | null = null;
  private random: () => number = Math.random;
  private matches: (method: string, path: string) => boolean = () => true;

  /** Takes the setting as stored (its JSON text, or undefined when off). */
  use(text: string | undefined): FaultConfig | null {
    if (text === this.text) return this.config;
    this.text = text ?? '';
    this.config = parseFaults(text);
    if (this.config !== null) {
      const seed = this.config.seed ?? Math.floor(Math.random() * 4_294_967_296);
      this.random = generator(seed);
      this.matches = this.config.route === null ? () => true : routeTest(this.config.route);
    }
    return this.config;
  }

  /** The fault for one request, or null when the setting leaves it alone. */
  draw(request: Pick<ApiRequest, 'method' | 'path' | 'headers'>): Fault | null {
    const c = this.config;
    if (c === null || !request.path.startsWith(API_PREFIX)) return null;
    if (!this.matches(request.method.toUpperCase(), request.path)) return null;
    if (c.mode !== null) {
      const token = request.headers.authorization === undefined ? undefined : bearerToken(request.headers.authorization);
      if (token === undefined || keyMode(token) !== c.mode) return null;
    }
    // Three draws for every matching request, whatever the setting uses, so the sequence stays put.
    const [u1, u2, u3] = [this.random(), this.random(), this.random()];
    const kind = u1 < c.error_rate ? c.errors[Math.floor(u2 * c.errors.length)]! : null;
    const latencyMs = c.latency_ms === null ? 0 : c.latency_ms.min + Math.floor(u3 * (c.latency_ms.max - c.latency_ms.min + 1));
    return kind === null && latencyMs === 0 ? null : { latencyMs, kind };
  }
}

const ANSWERS: Record<'429' | '500' | '503', [ErrorCode, string]> = {
  '429': ['rate_limited', 'Too many requests (a fault injected by carbon sandbox faults). Retry after the time given.'],
  '500': ['internal_error', 'The server failed to answer (a fault injected by carbon sandbox faults).'],
  '503': ['service_unavailable', 'The service is unavailable (a fault injected by carbon sandbox faults). Try again shortly.'],
};

/** The answer to a request drawn a 429, 500 or 503, in the API's error envelope. */
export function faultResponse(kind: '429' | '500' | '503', config: FaultConfig): ApiResponse {
  const [code, message] = ANSWERS[kind];
  const err = new ApiError(code, message);
  const headers: Record<string, string> = { 'request-id': requestId() };
  if (kind !== '500') headers['retry-after'] = String(config.retry_after_seconds);
  return { status: err.status, headers, body: { error: err.toBody() } };
}

/**
 * Notes in the journal an answer given in the service's place, as the caller met it: a fault's
 * (429, 500, 503), or the server's refusal of a request before the service saw it (server/intake.ts:
 * a body too large, a header sent twice). The service never saw these requests, so without this
 * `carbon logs --status 5xx` showed nothing of a rehearsal, nor `--status 4xx` a 413. The key is
 * looked up for the entry's key id and mode (a request without a key the sandbox knows is noted
 * without them; with `askLedger` false, as for an answer the ledger itself failed, it is not asked,
 * and the entry has the mode the key names and no key id). `trace` was taken as the request came,
 * before any latency drawn with a fault. Never throws: the answer goes out whatever the ledger says.
 */
export async function noteAnswer(
  service: OffsetsService,
  request: ApiRequest,
  response: ApiResponse,
  trace: Trace,
  askLedger = true,
): Promise<void> {
  await traceCaller(service.store, request, trace, askLedger);
  service.journal.record(response.headers['request-id'] ?? requestId(), request, response, trace);
}

/** `50ms-400ms` (a range) or `200ms` (always that long) → milliseconds; null when it is neither. */
export function parseLatency(text: string): { min: number; max: number } | null {
  const ms = (t: string) => (/^0+(ms|s)?$/.test(t.trim()) ? 0 : parseDuration(t));
  const [low = '', high = low, extra] = text.split('-');
  const min = ms(low);
  const max = ms(high);
  return extra !== undefined || min === null || max === null || min > max ? null : { min, max };
}

/** `0.3`, `1`, `0.25` → the share; null for anything else (`30%`, `1e-1`, `2`, `.25`). */
export function parseShare(text: string): number | null {
  return /^(0(\.\d+)?|1(\.0+)?)$/.test(text.trim()) ? Number(text) : null;
}

/** `50ms-400ms`, or `200ms` for a latency always that long (as it was written: `--latency 200ms`). */
export function latencyText({ min, max }: { min: number; max: number }): string {
  return min === max ? `${min}ms` : `${min}ms-${max}ms`;
}

/** One line for people: `30% of requests: 429, 500, 503, drop-before, drop-after; latency 50ms-400ms; POST /offsets; seed 7`. */
export function describeFaults(f: FaultConfig): string {
  const parts: string[] = [];
  if (f.error_rate > 0) parts.push(`${+(f.error_rate * 100).toFixed(2)}% of requests: ${f.errors.join(', ')}`);
  if (f.latency_ms !== null) parts.push(`latency ${latencyText(f.latency_ms)}`);
  parts.push(`${f.route ?? 'every route'}${f.mode === null ? '' : `, ${f.mode} keys only`}`);
  parts.push(f.seed === null ? 'no seed' : `seed ${f.seed}`);
  return parts.join('; ');
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
