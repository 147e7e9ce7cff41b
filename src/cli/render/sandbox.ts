import { MODES } from '../../api/types.js';
import { describeFaults, type FaultConfig } from '../../service/faults.js';
import type { SandboxKey, SandboxStatus } from '../../service/sandbox.js';
import type { SnapshotSummary } from '../../service/snapshots.js';
import { duration } from '../../service/units.js';
import { type Column, table } from './fit.js';
import { dollars, grouped, kg, ratePerKg, when } from './format.js';
import { modeText, type Paint, plainFields } from './resources.js';
import { displayWidth } from './width.js';

/**
 * The sandbox's objects as text: a card for a terminal, `field<TAB>value` lines (raw values,
 * the JSON's own names, dotted for nesting) for a pipe. Pure: values in, text out.
 */

export type SandboxAccount = SandboxStatus['account'];
export interface SandboxClock {
  now: string;
  offset_ms: number;
}

/** Labels padded by what a terminal shows of them: a coloured mode in a label takes no room. */
function card(rows: Array<[string, string]>, paint: Paint): string {
  const width = Math.max(...rows.map(([label]) => displayWidth(label)));
  return `${rows.map(([label, value]) => `${paint.dim(label + ' '.repeat(width - displayWidth(label)))}  ${value}`).join('\n')}\n`;
}

function accountStatusText(status: SandboxAccount['status'], paint: Paint): string {
  return status === 'active' ? paint.green(status) : paint.red(status);
}

function rateLimitText(a: SandboxAccount): string {
  return a.rate_limit_requests === null
    ? 'off'
    : `${grouped(a.rate_limit_requests)} request${a.rate_limit_requests === 1 ? '' : 's'} per ${duration(a.rate_limit_window_ms)} per key`;
}

function accountRows(a: SandboxAccount, paint: Paint): Array<[string, string]> {
  return [
    ['account', accountStatusText(a.status, paint)],
    ['rate', ratePerKg(a.rate)],
    ['review limit', `${dollars(a.review_limit_cents)} (larger live purchases wait for review)`],
    ['rate limit', rateLimitText(a)],
  ];
}

export function accountCard(a: SandboxAccount, paint: Paint): string {
  return card(accountRows(a, paint), paint);
}

export function accountPlain(a: SandboxAccount): string {
  return plainFields(Object.entries(a) as Array<[string, string | number | null]>);
}

export function clockCard(c: SandboxClock, paint: Paint): string {
  return card(
    [
      ['now', when(c.now)],
      // Behind real time after a snapshot from earlier is loaded: the clock starts again where it was.
      c.offset_ms < 0
        ? ['behind by', duration(-c.offset_ms)]
        : ['ahead by', c.offset_ms === 0 ? 'nothing (real time)' : duration(c.offset_ms)],
    ],
    paint,
  );
}

export function clockPlain(c: SandboxClock): string {
  return plainFields([
    ['now', c.now],
    ['offset_ms', c.offset_ms],
  ]);
}

export function statusCard(s: SandboxStatus, paint: Paint): string {
  const impact = (m: 'test' | 'live') =>
    `${kg(s.impact[m].placed_kg)} placed, ${kg(s.impact[m].processing_kg)} processing, ${grouped(s.impact[m].offsets)} ${s.impact[m].offsets === 1 ? 'offset' : 'offsets'}`;
  return card(
    [
      ...accountRows(s.account, paint),
      [
        'clock',
        `${when(s.clock.now)}${s.clock.offset_ms === 0 ? '' : paint.dim(s.clock.offset_ms < 0 ? ` (${duration(-s.clock.offset_ms)} behind)` : ` (${duration(s.clock.offset_ms)} ahead)`)}`,
      ],
      [`balance ${modeText(false, paint)}`, dollars(s.balances.test)],
      [`balance ${modeText(true, paint)}`, dollars(s.balances.live)],
      [`impact ${modeText(false, paint)}`, impact('test')],
      [`impact ${modeText(true, paint)}`, impact('live')],
      ['faults', s.faults === null ? 'off' : paint.yellow(describeFaults(s.faults))],
    ],
    paint,
  );
}

/** The fault setting as `field<TAB>value` lines, the JSON's own names; `faults<TAB>off` when none. */
function faultFields(f: FaultConfig | null, prefix: string): Array<[string, string | number | null]> {
  if (f === null) return [[prefix === '' ? 'faults' : prefix.slice(0, -1), 'off']];
  return [
    [`${prefix}error_rate`, f.error_rate],
    [`${prefix}errors`, f.errors.join(',')],
    [`${prefix}latency_ms`, f.latency_ms === null ? null : `${f.latency_ms.min}-${f.latency_ms.max}`],
    [`${prefix}route`, f.route],
    [`${prefix}mode`, f.mode],
    [`${prefix}seed`, f.seed],
    [`${prefix}retry_after_seconds`, f.retry_after_seconds],
  ];
}

export function faultsCard(f: FaultConfig | null, paint: Paint): string {
  if (f === null) return card([['faults', 'off (every request is answered as usual)']], paint);
  return card(
    [
      ['errors', f.error_rate === 0 ? 'none' : `${+(f.error_rate * 100).toFixed(2)}% of requests, drawn from ${f.errors.join(', ')}`],
      ['latency', f.latency_ms === null ? 'none' : `${f.latency_ms.min}ms to ${f.latency_ms.max}ms`],
      ['route', f.route ?? 'every route'],
      ['mode', f.mode ?? 'test and live'],
      ['seed', f.seed === null ? paint.dim('none (random in each process)') : String(f.seed)],
      ['retry-after', `${f.retry_after_seconds}s (on 429 and 503)`],
    ],
    paint,
  );
}

export function faultsPlain(f: FaultConfig | null): string {
  return plainFields(faultFields(f, ''));
}

export function statusPlain(s: SandboxStatus): string {
  const fields: Array<[string, string | number | null]> = [
    ...(Object.entries(s.account).map(([k, v]) => [`account.${k}`, v]) as Array<[string, string | number | null]>),
    ['clock.now', s.clock.now],
    ['clock.offset_ms', s.clock.offset_ms],
    ['balances.test', s.balances.test],
    ['balances.live', s.balances.live],
  ];
  for (const mode of MODES) {
    for (const [k, v] of Object.entries(s.impact[mode])) fields.push([`impact.${mode}.${k}`, v]);
  }
  fields.push(...faultFields(s.faults, 'faults.'));
  return plainFields(fields);
}

/** A key as printed: masked, or with its full text when the user asked to reveal it. */
export type ShownKey = SandboxKey & { secret?: string };

/**
 * The keys' table on a terminal, fitted to its width (fit.ts). Nothing is cut: ID and KEY are
 * what people copy. Columns go instead, least useful first: MODE (the key's prefix says it),
 * CREATED, DEFAULT, REVOKED (a revoked key is also dimmed), ACCESS, then a masked KEY, so a
 * terminal narrower than the two shows the id whole. A revealed key stays: on a terminal
 * narrower than about 62 cells it is cut at the edge all the same: pipe it or use --json.
 */
const KEY_TABLE: readonly Column[] = [
  { header: 'ID' },
  { header: 'KEY', drop: 6 },
  { header: 'MODE', drop: 1 },
  { header: 'ACCESS', drop: 5 },
  { header: 'DEFAULT', drop: 3 },
  { header: 'CREATED', drop: 2 },
  { header: 'REVOKED', drop: 4 },
];

/** One plain row: raw values, tab-separated, the full key in place of the masked one when revealed. */
export function keyRow(k: ShownKey): string {
  return [k.id, k.secret ?? k.masked, k.mode, k.permission, k.default ?? '', k.created, k.revoked ?? ''].join('\t');
}

function keyCells(k: ShownKey, paint: Paint): string[] {
  return [
    k.id,
    k.revoked === null ? (k.secret ?? k.masked) : paint.dim(k.secret ?? k.masked),
    modeText(k.mode === 'live', paint),
    k.permission === 'read_only' ? 'read-only' : 'purchase',
    k.default === null ? paint.dim('—') : k.default.replace('_', '-'),
    when(k.created),
    k.revoked === null ? paint.dim('—') : paint.red(when(k.revoked)),
  ];
}

/** The keys as a table fitted to `width` cells (undefined: as wide as it takes). */
export function keyTable(keys: readonly ShownKey[], paint: Paint, width: number | undefined): string {
  const rows = keys.map((k) => keyCells(k, paint));
  const revealed = keys.some((k) => k.secret !== undefined);
  return table(revealed ? KEY_TABLE.map((c) => (c.header === 'KEY' ? { header: 'KEY' } : c)) : KEY_TABLE, rows, width, paint.dim);
}

export function keyCard(k: ShownKey, paint: Paint): string {
  return card(
    [
      ['id', paint.bold(k.id)],
      ['key', k.secret ?? k.masked],
      ['mode', modeText(k.mode === 'live', paint)],
      ['access', k.permission === 'read_only' ? 'read-only' : 'purchase'],
      ['created', when(k.created)],
      ['revoked', k.revoked === null ? paint.dim('—') : paint.red(when(k.revoked))],
    ],
    paint,
  );
}

export function keyPlain(k: ShownKey): string {
  return plainFields([
    ['id', k.id],
    ['key', k.secret ?? k.masked],
    ['mode', k.mode],
    ['permission', k.permission],
    ['default', k.default],
    ['created', k.created],
    ['revoked', k.revoked],
  ]);
}

/** What a snapshot holds (save, load, --dry-run), for a person. */
export function snapshotCard(s: SnapshotSummary, paint: Paint): string {
  return card(
    [
      ['format', `carbon snapshot ${s.format}, saved by carbon ${s.carbon} at ${when(s.created)}`],
      ['clock', when(s.clock.now)],
      ['journal', s.journal ? 'included' : 'not included'],
      ...Object.entries(s.counts).map(([table, rows]): [string, string] => [table, grouped(rows)]),
    ],
    paint,
  );
}

export function snapshotPlain(s: SnapshotSummary): string {
  return plainFields([
    ['format', s.format],
    ['carbon', s.carbon],
    ['created', s.created],
    ['clock.now', s.clock.now],
    ['journal', s.journal],
    ...Object.entries(s.counts).map(([table, rows]): [string, number] => [`counts.${table}`, rows]),
  ]);
}
