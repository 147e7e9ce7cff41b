import { createHash, type Hash } from 'node:crypto';
import { isoTime } from '../platform/iso-time.js';
import { type ColumnKind, SNAPSHOT_TABLES, type SnapshotRow, type SnapshotTable, type SnapshotValue } from '../store/port.js';
import { LATEST_MODEL_TIME } from './settings.js';

/**
 * The snapshot file (docs/snapshots.md): NDJSON, one line a record, so that neither writing nor
 * reading it holds a ledger in memory.
 * - line 1, the header: `{"carbon_snapshot":1, "created", "carbon", "clock", "journal", "tables"}`,
 *   `tables` giving each table's columns and its number of rows;
 * - one line a row: `["offsets", 1, "off_…", …]`, the table's name, then its values in the
 *   header's column order, tables in a fixed order;
 * - the last line: `{"end":{"rows":N,"sha256":"…"}}`, the SHA-256 of every byte before it.
 * A reader checks every line against the header and the checksum at the end, so a file cut short,
 * edited or corrupted is refused before the transaction that loads it commits.
 */

/** The format this carbon writes, and the newest it reads. */
export const SNAPSHOT_FORMAT = 1;
/** The longest line a reader takes: a row is far shorter; a longer line is damage, not data. */
export const MAX_LINE = 1 << 20;
/** Rows handed to the store at a time. */
const BATCH = 1000;

export interface SnapshotHeader {
  carbon_snapshot: number;
  /** When it was saved (wall clock). */
  created: string;
  /** The carbon that saved it. */
  carbon: string;
  /** The model's clock when it was saved: loading starts it again from `now`. */
  clock: { now: string; now_ms: number; offset_ms: number };
  /** Whether the request journal is in it (`--with-journal`). */
  journal: boolean;
  tables: Record<string, { columns: string[]; rows: number }>;
}

export type SnapshotProblem = 'not_a_snapshot' | 'snapshot_newer' | 'snapshot_damaged';

/** A file refused: not a snapshot, from a newer carbon, or damaged. Nothing was loaded. */
export class SnapshotError extends Error {
  override name = 'SnapshotError';
  constructor(
    readonly code: SnapshotProblem,
    message: string,
  ) {
    super(message);
  }
}

/** The tables a snapshot holds, with the journal's only when asked for. */
export function snapshotTables(journal: boolean): Array<(typeof SNAPSHOT_TABLES)[number]> {
  return SNAPSHOT_TABLES.filter((t) => journal || !('journal' in t && t.journal));
}

/** Writes a snapshot's lines, keeping the checksum of what it wrote. */
export class SnapshotWriter {
  private readonly hash: Hash = createHash('sha256');
  private count = 0;

  constructor(private readonly write: (text: string) => Promise<void>) {}

  private async out(text: string): Promise<void> {
    this.hash.update(text);
    await this.write(text);
  }

  header(header: SnapshotHeader): Promise<void> {
    return this.out(`${JSON.stringify(header)}\n`);
  }

  /** A batch of rows of one table, as one write. */
  async rows(table: SnapshotTable, rows: SnapshotRow[]): Promise<void> {
    if (rows.length === 0) return;
    let text = '';
    for (const row of rows) text += `${JSON.stringify([table, ...row.map(encodeValue)])}\n`;
    this.count += rows.length;
    await this.out(text);
  }

  /** The end line: the row count and the checksum (not itself part of what it sums). */
  end(): Promise<void> {
    return this.write(`${JSON.stringify({ end: { rows: this.count, sha256: this.hash.digest('hex') } })}\n`);
  }
}

const encodeValue = (v: SnapshotValue): number | string | null => (v instanceof Uint8Array ? Buffer.from(v).toString('base64') : v);

function decodeValue(v: unknown, kind: ColumnKind): SnapshotValue | undefined {
  if (v === null) return kind.endsWith('?') ? null : undefined;
  if (kind.startsWith('int')) return Number.isSafeInteger(v) ? (v as number) : undefined;
  if (typeof v !== 'string') return undefined;
  if (kind !== 'bytes') return v;
  return /^[A-Za-z0-9+/]*={0,2}$/.test(v) && v.length % 4 === 0 ? new Uint8Array(Buffer.from(v, 'base64')) : undefined;
}

const damaged = (where: string, what: string) => new SnapshotError('snapshot_damaged', `${where}: ${what}`);

/** The header, checked: a snapshot, of a format this carbon reads, with the tables it knows. */
function readHeader(line: string | undefined): { header: SnapshotHeader; tables: Array<(typeof SNAPSHOT_TABLES)[number]> } {
  let header: Partial<SnapshotHeader> | undefined;
  try {
    header = line === undefined ? undefined : (JSON.parse(line) as Partial<SnapshotHeader>);
  } catch {
    // Begun as a header (a copy cut short in it): a damaged snapshot, not another kind of file.
    if (line?.startsWith('{"carbon_snapshot":')) throw damaged('line 1', 'it is not JSON');
    header = undefined;
  }
  if (header === null || typeof header !== 'object' || typeof header.carbon_snapshot !== 'number')
    throw new SnapshotError('not_a_snapshot', 'it is not a carbon snapshot (its first line is no snapshot header)');
  // A format is a whole number from 1 (1.5 or 0 is no format any carbon wrote: not "newer", not "incomplete").
  if (!Number.isSafeInteger(header.carbon_snapshot) || header.carbon_snapshot < 1)
    throw damaged('line 1', `its format, carbon_snapshot ${header.carbon_snapshot}, is none carbon writes (1, 2, …)`);
  if (header.carbon_snapshot > SNAPSHOT_FORMAT)
    throw new SnapshotError(
      'snapshot_newer',
      `it was saved in snapshot format ${header.carbon_snapshot} (by carbon ${String(header.carbon ?? 'unknown')}), newer than this carbon reads (up to ${SNAPSHOT_FORMAT})`,
    );
  const clock = header.clock;
  if (
    typeof header.tables !== 'object' ||
    header.tables === null ||
    typeof clock !== 'object' ||
    clock === null ||
    !Number.isSafeInteger(clock.now_ms)
  )
    throw damaged('line 1', 'the header is incomplete');
  // A load sets the model's clock to it: only a time the model can hold, as `sandbox clock advance` allows.
  if (clock.now_ms < 0 || clock.now_ms > LATEST_MODEL_TIME)
    throw damaged('line 1', `the clock (${clock.now_ms} ms) is outside what the model can hold (1970 to ${isoTime(LATEST_MODEL_TIME)})`);
  const tables = snapshotTables(header.journal === true);
  const names = Object.keys(header.tables);
  if (names.join() !== tables.map((t) => t.name).join()) throw damaged('line 1', `the header lists the tables ${names.join(', ')}`);
  for (const t of tables) {
    const h = header.tables[t.name]!;
    if (!Number.isSafeInteger(h.rows) || h.rows < 0 || !Array.isArray(h.columns) || h.columns.join() !== Object.keys(t.columns).join())
      throw damaged('line 1', `the header's ${t.name} table is not this format's`);
  }
  if (header.tables.account!.rows !== 1) throw damaged('line 1', 'a snapshot holds one account');
  return { header: header as SnapshotHeader, tables };
}

/** An opened snapshot: its header, and its rows (checked as they are read; the end checked after the last). */
export interface OpenedSnapshot {
  header: SnapshotHeader;
  batches: AsyncIterable<{ table: SnapshotTable; rows: SnapshotRow[] }>;
}

/**
 * Reads a snapshot from its lines. The header is read and checked now; the rows as `batches` is
 * iterated: each line must be the next row of a table of the header, of its kinds, and the end
 * line must count them and sum every byte, or `batches` throws (after its last batch, for the end).
 */
export async function openSnapshot(lines: AsyncIterable<string>): Promise<OpenedSnapshot> {
  const iterator = lines[Symbol.asyncIterator]();
  const first = await iterator.next();
  const { header, tables } = readHeader(first.done ? undefined : first.value);
  const hash = createHash('sha256').update(`${first.value}\n`);
  const order = new Map(tables.map((t, i) => [t.name as string, i]));
  async function* batches(): AsyncGenerator<{ table: SnapshotTable; rows: SnapshotRow[] }> {
    let lineNo = 1;
    let at = 0;
    let batch: SnapshotRow[] = [];
    const seen = new Map<string, number>();
    for (;;) {
      const next = await iterator.next();
      lineNo++;
      if (next.done) throw damaged(`line ${lineNo}`, 'the file ends before its end line (cut short?)');
      const line = next.value;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        throw damaged(`line ${lineNo}`, 'it is not JSON');
      }
      if (!Array.isArray(value)) {
        if (batch.length > 0) yield { table: tables[at]!.name, rows: batch };
        checkEnd(value, `line ${lineNo}`, hash.digest('hex'), seen, header, first.value.endsWith('\r'));
        if ((await iterator.next()).done !== true) throw damaged(`line ${lineNo + 1}`, 'there is more after the end line');
        return;
      }
      hash.update(`${line}\n`);
      const index = order.get(value[0] as string);
      if (index === undefined || index < at) throw damaged(`line ${lineNo}`, `a row of ${JSON.stringify(value[0])} is not in its place`);
      if (index > at && batch.length > 0) {
        yield { table: tables[at]!.name, rows: batch };
        batch = [];
      }
      at = index;
      batch.push(decodeRow(value, Object.values(tables[at]!.columns), `line ${lineNo}`));
      seen.set(tables[at]!.name, (seen.get(tables[at]!.name) ?? 0) + 1);
      if (batch.length === BATCH) {
        yield { table: tables[at]!.name, rows: batch };
        batch = [];
      }
    }
  }
  return { header, batches: batches() };
}

function decodeRow(value: unknown[], kinds: ColumnKind[], where: string): SnapshotRow {
  if (value.length !== kinds.length + 1)
    throw damaged(where, `a row of ${String(value[0])} has ${value.length - 1} values, not ${kinds.length}`);
  const row: SnapshotRow = new Array(kinds.length);
  for (let i = 0; i < kinds.length; i++) {
    const decoded = decodeValue(value[i + 1], kinds[i]!);
    if (decoded === undefined) throw damaged(where, `value ${i + 1} of a row of ${String(value[0])} is not ${kinds[i]}`);
    row[i] = decoded;
  }
  return row;
}

/** Why a file's checksum may differ when its lines end in \r\n: carbon writes \n alone. */
const CRLF =
  '; its lines end in CRLF, as Git with core.autocrlf or a Windows editor writes them: restore its LF ends (in Git, mark snapshots -text in .gitattributes)';

function checkEnd(value: unknown, where: string, sha256: string, seen: Map<string, number>, header: SnapshotHeader, crlf: boolean): void {
  const end = (value as { end?: { rows?: unknown; sha256?: unknown } } | null)?.end;
  if (typeof end !== 'object' || end === null) throw damaged(where, 'it is neither a row nor the end line');
  if (end.sha256 !== sha256) throw damaged('the checksum', `the file is not what was saved (its SHA-256 differs)${crlf ? CRLF : ''}`);
  for (const [table, { rows }] of Object.entries(header.tables)) {
    if ((seen.get(table) ?? 0) !== rows) throw damaged(table, `the header says ${rows} rows, the file holds ${seen.get(table) ?? 0}`);
  }
}

/**
 * A stream's text as lines, for openSnapshot: split on \n, a line longer than MAX_LINE refused
 * (damage, or not a snapshot at all), without holding more than one chunk and one line.
 */
export async function* linesOf(chunks: AsyncIterable<Buffer | string>): AsyncGenerator<string> {
  // The line so far, in pieces: only each new chunk is searched for a line's end, so a long line
  // read in small chunks stays linear.
  let parts: string[] = [];
  let length = 0;
  let lineNo = 1;
  // A character cut between two chunks is joined again; bytes that are no UTF-8 become U+FFFD,
  // which the checksum then refuses.
  const decoder = new TextDecoder();
  const tooLong = () =>
    lineNo === 1
      ? new SnapshotError('not_a_snapshot', 'it is not a carbon snapshot (its first line is no snapshot header)')
      : damaged(`line ${lineNo}`, `it is longer than ${MAX_LINE} bytes`);
  for await (const chunk of chunks) {
    const text = typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    let start = 0;
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
      if (length + nl - start > MAX_LINE) throw tooLong();
      parts.push(text.slice(start, nl));
      yield parts.join('');
      parts = [];
      length = 0;
      lineNo++;
      start = nl + 1;
    }
    if (start < text.length) {
      parts.push(text.slice(start));
      length += text.length - start;
      if (length > MAX_LINE) throw tooLong();
    }
  }
  parts.push(decoder.decode());
  const last = parts.join('');
  if (last !== '') yield last;
}
