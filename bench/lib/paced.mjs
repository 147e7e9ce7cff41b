// An open-loop load at a steady rate, for "the latency a buyer sees at N requests a second".
//
// Request i is due at start + i/rate and is sent at the first timer tick at or after that, whether
// or not earlier ones have been answered (no coordinated omission: a stalled server keeps being
// sent requests, and each counts the stall). Its latency counts from when it was sent; how late
// the generator itself sent requests (its timer ticks are a millisecond apart, and it shares the
// machine) is reported apart, as `lag`. autocannon's --overallRate is not that:
// each connection sends its share of a second as fast as it can at the top of the second and then
// waits, so it measures bursts at full speed, and its omission correction adds samples on top.
//
// Loopback only (the bench's own servers); bounded by `seconds` and a per-request timeout.
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { quantile } from './stats.mjs';

/**
 * @param {{ url: string, method?: string, headers?: Record<string, string>, body?: string,
 *           rate: number, seconds: number, perRequest?: () => Record<string, string> }} options
 */
export async function paced({ url, method = 'GET', headers = {}, body, rate, seconds, perRequest }) {
  const target = new URL(url);
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(target.hostname))
    throw new Error(`paced load is for loopback servers, not ${target.host}`);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  const total = Math.round(rate * seconds);
  const latencies = new Float64Array(total);
  const statuses = new Map();
  let sent = 0;
  let done = 0;
  let errors = 0;
  let lag = 0;
  const t0 = performance.now();
  await new Promise((resolve) => {
    const finish = (i, sentAt, status) => {
      latencies[i] = performance.now() - sentAt;
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      if (++done === total) resolve();
    };
    const tick = () => {
      const due = Math.min(total, Math.floor(((performance.now() - t0) * rate) / 1000) + 1);
      while (sent < due) {
        const i = sent++;
        const sentAt = performance.now();
        lag = Math.max(lag, sentAt - (t0 + (i * 1000) / rate));
        const req = http.request(
          {
            agent,
            host: target.hostname,
            port: target.port,
            path: target.pathname + target.search,
            method,
            headers: { ...headers, ...perRequest?.() },
            timeout: 10_000,
          },
          (res) => {
            res.resume();
            res.on('end', () => finish(i, sentAt, res.statusCode));
          },
        );
        req.on('timeout', () => req.destroy(new Error('timed out')));
        req.on('error', () => {
          errors++;
          finish(i, sentAt, 'error');
        });
        req.end(body);
      }
      // Node's timers fire at most once a millisecond: at 2,000/s, two requests a tick.
      if (sent < total) setTimeout(tick, 1);
    };
    tick();
  });
  const elapsed = (performance.now() - t0) / 1000;
  agent.destroy();
  const all = Array.from(latencies);
  return {
    rps: total / elapsed,
    p50: quantile(all, 0.5),
    p99: quantile(all, 0.99),
    p999: quantile(all, 0.999),
    max: Math.max(...all),
    lag,
    errors,
    non2xx: [...statuses].filter(([s]) => typeof s !== 'number' || s < 200 || s > 299).reduce((n, [, c]) => n + c, 0),
    total,
  };
}
