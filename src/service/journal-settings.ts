import { hostName } from '../platform/host.js';

/** The request journal's settings (journal.ts), and those the environment gives (CARBON_JOURNAL…). */

const DAY_MS = 86_400_000;

export interface JournalSettings {
  /** Off: nothing is recorded (`CARBON_JOURNAL=off`). */
  enabled: boolean;
  /** The newest entries kept (`CARBON_JOURNAL_KEEP`, default 10,000). */
  keep: number;
  /** Entries older than this (real time) are deleted (`CARBON_JOURNAL_MAX_AGE_DAYS`, default 7). */
  maxAgeMs: number;
  /** Which process answered: host:pid unless given. */
  instance: string;
  /** How long answered requests wait to be written together (FLUSH_MS unless given). */
  flushMs?: number;
  /** After a drop, how often the ledger is asked whether it answers again (PROBE_MS unless given). */
  probeMs?: number;
  /** Where the journal says what it dropped, in one line an outage (`carbon serve` gives its log); nowhere unless given. */
  log?: (line: string) => void;
}

/**
 * The settings without any asked for. `instance` is this process's name in the journal, read
 * when first used (a command that records nothing never asks the machine its name).
 */
export const JOURNAL_DEFAULTS: JournalSettings = {
  enabled: true,
  keep: 10_000,
  maxAgeMs: 7 * DAY_MS,
  get instance() {
    instance ??= `${hostName()}:${process.pid}`;
    return instance;
  },
};
let instance: string | undefined;

/** CARBON_JOURNAL's words, in any case, and whether each turns the journal on (unset or empty: on). */
const SWITCHED = new Map([
  ['', true],
  ['on', true],
  ['1', true],
  ['true', true],
  ['yes', true],
  ['off', false],
  ['0', false],
  ['false', false],
  ['no', false],
]);

/** The settings the environment gives; a value none takes is refused, with its name (CARBON_JOURNAL=disabled is not on). */
export function journalSettingsFrom(env: NodeJS.ProcessEnv): JournalSettings {
  const whole = (name: string, fallback: number, max: number): number => {
    const text = env[name];
    if (text === undefined || text === '') return fallback;
    if (!/^\d+$/.test(text) || Number(text) > max) throw new Error(`${name} must be a whole number up to ${max}, not "${text}".`);
    return Number(text);
  };
  const switched = env.CARBON_JOURNAL ?? '';
  const enabled = SWITCHED.get(switched.toLowerCase());
  if (enabled === undefined) throw new Error(`CARBON_JOURNAL must be off (or 0, false, no) or on, not "${switched.slice(0, 40)}".`);
  return {
    enabled,
    keep: whole('CARBON_JOURNAL_KEEP', JOURNAL_DEFAULTS.keep, 10_000_000),
    maxAgeMs: whole('CARBON_JOURNAL_MAX_AGE_DAYS', 7, 3650) * DAY_MS,
    get instance() {
      return JOURNAL_DEFAULTS.instance;
    },
  };
}
