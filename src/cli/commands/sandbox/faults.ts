import { describeFaults, type FaultConfig, parseLatency, parseShare } from '../../../service/faults.js';
import { checkFaults, type FaultInput } from '../../../service/settings.js';
import type { Context } from '../../context.js';
import { usage } from '../../errors.js';
import { wholeNumberOption } from '../../options.js';
import { print } from '../../print.js';
import { faultsCard, faultsPlain } from '../../render/sandbox.js';
import { note, open } from './shared.js';

/** `carbon sandbox faults`: the errors and latency every carbon serve on this ledger injects. */

export interface FaultFlags {
  errorRate?: string;
  errors?: string;
  latency?: string;
  route?: string;
  mode?: string;
  seed?: string;
  retryAfter?: string;
}

function latencyOption(value: string): { min: number; max: number } {
  const range = parseLatency(value);
  if (range === null) throw usage(`--latency is a duration or a range such as 200ms or 50ms-400ms (the low end first), not "${value}".`);
  return range;
}

function shareOption(value: string, name: string): number {
  const share = parseShare(value);
  if (share === null) throw usage(`${name} is a share from 0 to 1, such as 0.3, not "${value}".`);
  return share;
}

export async function faultsShow(ctx: Context): Promise<void> {
  const sandbox = await open(ctx, 'faults');
  await print(ctx, await sandbox.faults(), faultsCard, faultsPlain);
}

export async function faultsSet(ctx: Context, flags: FaultFlags): Promise<void> {
  const input: FaultInput = {
    ...(flags.errorRate === undefined ? {} : { error_rate: shareOption(flags.errorRate, '--error-rate') }),
    ...(flags.errors === undefined ? {} : { errors: flags.errors.split(',').map((e) => e.trim()) }),
    ...(flags.latency === undefined ? {} : { latency_ms: latencyOption(flags.latency) }),
    ...(flags.route === undefined ? {} : { route: flags.route }),
    ...(flags.mode === undefined ? {} : { mode: flags.mode }),
    ...(flags.seed === undefined ? {} : { seed: wholeNumberOption(flags.seed, '--seed', { max: 0xffffffff }) }),
    ...(flags.retryAfter === undefined ? {} : { retry_after_seconds: wholeNumberOption(flags.retryAfter, '--retry-after', { max: 60 }) }),
  };
  // No default share of errors: a sandbox that failed requests unasked would surprise.
  if (input.error_rate === undefined && input.latency_ms === undefined) {
    throw usage('Say what to inject: --error-rate 0.3 (429, 500, 503 and dropped connections mixed), --latency 50ms-400ms, or both.');
  }
  const sandbox = await open(ctx, 'faults set', () => checkFaults(input));
  const config = await sandbox.setFaults(input);
  await note(
    ctx,
    (p) =>
      `${p.yellow('✓')} Faults on: ${describeFaults(config)}. ` +
      'Every carbon serve on this ledger applies them from its next request; `carbon sandbox faults off` clears them.',
  );
  await print(ctx, config as FaultConfig | null, faultsCard, faultsPlain);
}

export async function faultsOff(ctx: Context): Promise<void> {
  const sandbox = await open(ctx, 'faults off');
  await sandbox.clearFaults();
  await note(ctx, (p) => `${p.green('✓')} Faults off: every request is answered as usual.`);
  await print(ctx, null as FaultConfig | null, faultsCard, faultsPlain);
}
