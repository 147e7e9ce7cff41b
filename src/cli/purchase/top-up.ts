import type { Mode } from '../../api/types.js';
import { engineFlags, followUp } from '../follow-up.js';

/**
 * What to do when the balance of `mode` falls short of a purchase, said alike by the 402, by
 * `buy --dry-run` and by a batch the balance does not cover: the sandbox command of the same mode
 * on the local engine (no less than the smallest top-up, $250), the developer page on the remote
 * one. A clause, without its full stop.
 */
export function topUpHint(mode: Mode, engine: 'local' | 'remote', balanceCents: number, requiredCents: number): string {
  if (engine === 'remote') return `Top up the ${mode} balance on the developer page`;
  return `Top it up with ${topUpCommand(mode, balanceCents, requiredCents)}`;
}

/** The local sandbox's top-up that brings the balance to what is required (at least $250), as a command in backquotes. */
export function topUpCommand(mode: Mode, balanceCents: number, requiredCents: number): string {
  const amount = String(Math.max(250, Math.ceil((requiredCents - balanceCents) / 100)));
  const live = mode === 'live' && !engineFlags().includes('--live') ? ['--live'] : [];
  return `\`${followUp(['sandbox', 'topup', amount, ...live])}\``;
}
