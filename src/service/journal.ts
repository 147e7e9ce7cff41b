import type { RequestEntry } from '../api/journal.js';
import type { ApiRequest, ApiResponse } from '../api/types.js';
import { monotonicUs } from '../platform/host.js';
import { isoTime } from '../platform/iso-time.js';
import { LedgerError } from '../store/ledger-error.js';
import { JOURNAL_SEQ_META, type LedgerStore, type NewJournalRecord } from '../store/port.js';
import { type Note, note, type Trace } from './journal-note.js';
import type { JournalSettings } from './journal-settings.js';
import { journalQuery, NO_FILTER, type RequestFilter, requestEntry } from './journal-view.js';

/**
 * The request journal: every request the model answers, with its answer, kept in the ledger (so
 * every instance on one PostgreSQL ledger writes to, and reads, one journal).
 *
 * Nothing is written on a request's way out: an answered request is made into its entry at once
 * (bodies serialised, masked and bounded, so no answer's objects are held), and the entries are
 * written together, one batch a `FLUSH_MS` (or at once at `MAX_PENDING`), in one transaction of
 * their own.
 * close() writes what is left, so a clean stop loses nothing (a command's end waits on another
 * process's lock only so long, EXITING_WAIT_MS); a process killed outright (kill -9)
 * loses the entries it answered in its last `FLUSH_MS`. A batch the ledger does not take (locked,
 * unreachable) waits in memory and goes with the next, up to `MAX_WAITING` entries waiting in
 * all, and is dropped past them (so are the requests answered while that many wait), or when a
 * flush or close still cannot write it: the API's answers never wait for, or
 * fail on, the journal. What was dropped is said once an outage (`settings.log`), as soon as the
 * ledger answers again: asked a `PROBE_MS` after a drop, so a quiet sandbox needs no request for it.
 */

/** How long answered requests wait to be written together. */
const FLUSH_MS = 50;
/**
 * Written at once at this many, and at most this many a transaction: a batch holds SQLite's write
 * lock for a millisecond or two, not for as long as a busy process's backlog would take. A loop
 * that never yields to the event loop (a script buying back to back in process) writes here too,
 * so what waits in memory stays bounded.
 */
const MAX_PENDING = 100;
/**
 * At most this many a transaction when more than MAX_PENDING wait (a burst of requests answered
 * faster than batches of a hundred are written: 1,000 connections each sending nine at once left
 * 2,000 waiting, and the rest dropped, with the ledger healthy): ten milliseconds of the lock or so.
 */
const MAX_BEHIND = 1_000;
/**
 * Written at once at this many characters of bodies too: a `list --all` answers a page, kept as
 * 8 KiB, every millisecond or so. Written a hundred at a time, `list --all` over a million offsets
 * peaked at 140 MB RSS against 81 MB with the journal off; two at a time, at 86 MB (measured
 * at 16, 32, 64 and 256 KiB: only 16 KiB stayed under 100 MB). A purchase's entry is about 1 KiB,
 * so purchases still go about sixteen to a batch, at the same rate (bench/journal.mjs).
 */
const MAX_PENDING_CHARS = 16 * 1024;
/**
 * A batch does not wait for a lock another process holds (SQLite's write lock; PostgreSQL's journal
 * table) while fewer than this many are waiting: it is tried again with the next. Past it, it waits
 * as any write does.
 */
const MAX_WAITING = 2_000;
/**
 * At a command's end, how long its entries wait for another process's write lock before they are
 * dropped (README, "carbon logs"). Writers hold it for a millisecond or two (a purchase, a batch
 * of `carbon serve`'s entries), so an entry is lost only to a write that takes far longer; the
 * command's answer is out already, and without this bound its process waited the busy timeout (5 s).
 */
const EXITING_WAIT_MS = 250;
/**
 * After a drop, how often the ledger's health (the check /healthz makes) is asked until it answers,
 * to say what was dropped then rather than at the next request: one check at a time. On PostgreSQL
 * a `SELECT 1` (bounded by its deadlines); on SQLite a read, which another process's write lock
 * does not hold up, so there the line comes about a second after the drop.
 */
const PROBE_MS = 1_000;

export class Journal {
  private pending: Note[] = [];
  /** The characters of the bodies waiting in `pending`. */
  private pendingChars = 0;
  /** Notes whose batch the ledger did not take (locked, or not answering): written first, with the next batch. */
  private ready: Note[] = [];
  /**
   * The first `count` of `ready` were a batch whose transaction may have committed all the same (a
   * COMMIT whose answer was lost: PostgreSQL): in the ledger whole or not at all, so its first
   * entry's Request-Id says which, asked before it is written again (else each entry twice).
   */
  private unsure: { requestId: string; count: number } | null = null;
  private timer: NodeJS.Timeout | null = null;
  private writing: Promise<void> | null = null;
  /** Entries dropped because the ledger refused their batch, since the journal was made. */
  dropped = 0;
  /** Those dropped since the journal last wrote (one outage), with when the first and the last were answered (real ms). */
  private lost = { count: 0, from: Number.POSITIVE_INFINITY, to: 0 };
  /** The next check, after a drop, of whether the ledger answers again (unref'd: it keeps no process alive). */
  private probing: NodeJS.Timeout | null = null;
  private closed = false;
  /** The model clock's offset last read (clockOffset). */
  private offsetRead = 0;
  /** At a command's end, when waiting for another writer's lock stops (monotonicUs); until then, a write waits the store's busy timeout. */
  private lockWaitEnds: number | undefined;

  constructor(
    private readonly store: LedgerStore,
    readonly settings: JournalSettings,
    private readonly clock: () => number,
  ) {}

  /** A trace for a request starting now. */
  trace(): Trace {
    return { started: monotonicUs(), keyId: null, mode: null, now: null, emptied: null, offsetId: null, replayed: false };
  }

  /** Notes an answered request; it is written with the next batch. */
  record(id: string, request: ApiRequest, response: ApiResponse, trace: Trace): void {
    if (!this.settings.enabled || this.closed) return;
    const durationUs = monotonicUs() - trace.started;
    const n = note(id, request, response, trace, this.clock(), durationUs, this.settings.instance);
    // A stalled ledger holds the batch under way for its deadlines while requests are still
    // answered: past MAX_WAITING entries waiting, a new one is dropped (and said), so what waits in
    // memory stays bounded whatever the request rate.
    if (this.pending.length + this.ready.length >= MAX_WAITING) {
      this.drop([n]);
      return;
    }
    const count = this.pending.push(n);
    this.pendingChars += n.request_body.length + n.response_body.length;
    if ((count >= MAX_PENDING || this.pendingChars >= MAX_PENDING_CHARS) && this.writing === null) this.writeSome(false).catch(() => {});
    else this.schedule();
  }

  /** The next batch in FLUSH_MS, unless one is due already. */
  private schedule(): void {
    if (this.timer !== null || (this.pending.length === 0 && this.ready.length === 0)) return;
    this.timer = setTimeout(this.tick, this.settings.flushMs ?? FLUSH_MS);
    this.timer.unref();
  }

  private readonly tick = (): void => {
    this.timer = null;
    this.writeSome(false).catch(() => {});
  };

  /** Writes everything noted so far, waiting for the lock if it must; resolves once it is in the ledger (or was dropped). */
  async flush(): Promise<void> {
    while (this.pending.length > 0 || this.ready.length > 0 || this.writing !== null) await this.writeSome(true);
  }

  /** Waits for the write under way, or writes the next MAX_PENDING noted (without waiting for a lock unless `wait`). */
  private async writeSome(wait: boolean): Promise<void> {
    if (this.writing !== null) return this.writing;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    const batch = this.pending.splice(0, Math.max(0, (this.pending.length > MAX_PENDING ? MAX_BEHIND : MAX_PENDING) - this.ready.length));
    this.pendingChars = 0;
    for (const n of this.pending) this.pendingChars += n.request_body.length + n.response_body.length;
    this.writing = this.write(batch, wait).finally(() => {
      this.writing = null;
      // What was noted meanwhile (or left over) goes with the next batch.
      this.schedule();
    });
    await this.writing;
  }

  private async write(batch: Note[], mustWait: boolean): Promise<void> {
    // What a batch the ledger did not take left goes first, then the notes that came after.
    const records = this.ready.concat(batch);
    this.ready = [];
    try {
      if (this.unsure !== null) {
        const { requestId, count } = this.unsure;
        if ((await this.store.journal(journalQuery({ ...NO_FILTER, requestId, limit: 1 }))).length > 0) records.splice(0, count);
        this.unsure = null;
      }
      // Requests answered before the account was read (an unknown path, a refusal) take its clock now.
      const offset = records.some((n) => n.model_ms === null) ? await this.clockOffset(records) : 0;
      // The notes are the journal's own: each takes its model time in place (no copy an entry).
      for (const n of records) n.model_ms ??= n.real_ms + offset;
      const { keep, maxAgeMs } = this.settings;
      // Never waits for another writer's lock while little is waiting: tried again with the next batch.
      const wait = mustWait || this.pending.length + records.length > MAX_WAITING;
      await this.store.appendJournal(records as NewJournalRecord[], { keep, maxAgeMs, now: this.clock() }, this.lockWait(wait));
      this.sayLost();
    } catch (err) {
      // Left for the next batch while the writer may come back to it; a write that waited its
      // turn (flush, close) and still met a held lock gives up, so a close never loops on it.
      if (!mustWait && err instanceof LedgerError && err.transient && this.pending.length + records.length <= MAX_WAITING) {
        if (!err.unwritten && this.unsure === null && records.length > 0)
          this.unsure = { requestId: records[0]!.request_id, count: records.length };
        this.ready = records.concat(this.ready);
        return;
      }
      this.unsure = null;
      this.drop(records);
    }
  }

  /**
   * The model clock's offset, from the account; where that read is refused for good (a right taken: 42501), an entry's of the
   * batch, else the last read, so the refused requests are still written. One failed in passing (a stall) keeps the batch waiting.
   */
  private async clockOffset(records: Note[]): Promise<number> {
    try {
      this.offsetRead = (await this.store.account())?.clock_offset_ms ?? 0;
    } catch (err) {
      if (!(err instanceof LedgerError) || err.transient) throw err;
      const timed = records.find((n) => n.model_ms !== null);
      if (timed !== undefined) this.offsetRead = timed.model_ms! - timed.real_ms;
    }
    return this.offsetRead;
  }

  /** How long a write waits for another writer's lock: not at all, the store's busy timeout, or (at a command's end) what is left of EXITING_WAIT_MS. */
  private lockWait(wait: boolean): { waitMs?: number } {
    if (!wait) return { waitMs: 0 };
    if (this.lockWaitEnds === undefined) return {};
    return { waitMs: Math.max(0, Math.ceil((this.lockWaitEnds - monotonicUs()) / 1000)) };
  }

  private drop(records: Note[]): void {
    this.dropped += records.length;
    this.lost.count += records.length;
    for (const r of records) {
      this.lost.from = Math.min(this.lost.from, r.real_ms);
      this.lost.to = Math.max(this.lost.to, r.real_ms);
    }
    this.probeLater();
  }

  private probeLater(): void {
    if (this.probing !== null || this.closed) return;
    this.probing = setTimeout(this.probe, this.settings.probeMs ?? PROBE_MS);
    this.probing.unref();
  }

  /**
   * Whether the ledger answers again, with no request to write: said then. A batch under way or
   * due says it itself when written (or, dropped too, asks again), and a close says it.
   */
  private readonly probe = async (): Promise<void> => {
    const writes = () => this.writing !== null || this.timer !== null;
    const answers =
      this.closed || this.lost.count === 0 || writes()
        ? null
        : await this.store.health().then(
            (h) => h.ok,
            () => false,
          );
    this.probing = null;
    if (answers === true && !writes()) this.sayLost();
    else if (answers === false) this.probeLater();
  };

  /**
   * What the journal dropped since it last wrote, said once, in one line, when it writes again or
   * the ledger answers its check again (the outage is over), or it closes: not an entry or a batch
   * at a time. `carbon logs` will miss those requests, and the operator reads here which and how many.
   */
  private sayLost(): void {
    const { count, from, to } = this.lost;
    if (count === 0) return;
    this.lost = { count: 0, from: Number.POSITIVE_INFINITY, to: 0 };
    this.settings.log?.(
      `the request journal dropped ${count} ${count === 1 ? 'entry' : 'entries'} the ledger did not take (requests answered from ${isoTime(from)} to ${isoTime(to)}): carbon logs will not show them`,
    );
  }

  /** Entries, newest first (oldest first with `after`): this process's own written first, so it reads what it answered. */
  async entries(filter: RequestFilter): Promise<RequestEntry[]> {
    const query = journalQuery(filter);
    await this.flush();
    return (await this.store.journal(query)).map(requestEntry);
  }

  /**
   * The highest seq handed out (0: none yet): the newest entry's, or, on a journal emptied since (a
   * reset, a snapshot loaded without one), the highest before it, which seqs go on past. A follower
   * starts there; below one it had read, the journal started again (a journal emptied by an older carbon).
   */
  async newestSeq(): Promise<number> {
    const [newest, kept] = await Promise.all([this.entries({ ...NO_FILTER, limit: 1 }), this.store.meta(JOURNAL_SEQ_META)]);
    return Math.max(newest[0]?.seq ?? 0, Number(kept ?? 0));
  }

  /** The entry of one Request-Id, or undefined. */
  async entry(requestId: string): Promise<RequestEntry | undefined> {
    return (await this.entries({ ...NO_FILTER, requestId, limit: 1 }))[0];
  }

  /**
   * Writes what is left; nothing is noted after. At a command's end (`exiting`), what is left waits
   * at most EXITING_WAIT_MS in all for another process's write lock, and is dropped past it: a command
   * never waits on another's long write (a snapshot loading, a long import) only to journal itself.
   */
  async close(options: { exiting?: boolean } = {}): Promise<void> {
    // Not performance.now(): the global loads node:perf_hooks, which a read does not (test/e2e/startup.test.ts).
    if (options.exiting === true) this.lockWaitEnds = monotonicUs() + EXITING_WAIT_MS * 1000;
    await this.flush();
    this.closed = true;
    if (this.probing !== null) clearTimeout(this.probing);
    this.probing = null;
    this.sayLost();
  }
}
