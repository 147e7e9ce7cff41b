import type { Offset } from '../../api/types.js';

/**
 * What `carbon watch` knows between polls, and the events one poll finds. The API has no
 * webhooks, so changes are found by reading the list, newest first: an offset newer than the
 * newest seen is new (`offset.created`), and an offset seen processing that is now placed or
 * refunded has settled. The walk stops at the first offset older than both the newest seen and
 * every offset still processing, so a poll reads what can have changed, not the whole ledger.
 */

export type EventType = 'offset.created' | 'offset.placed' | 'offset.refunded';

export interface WatchEvent {
  id: string;
  object: 'event';
  type: EventType;
  /** The offset's `created` or `placed` for those events; when the refund was seen for offset.refunded. */
  created: string;
  data: { object: Offset };
}

/** The cursor: everything a later run needs to carry on where this one stopped. */
export interface WatchState {
  version: 1;
  mode: 'test' | 'live';
  reference: string | null;
  /** The newest offset seen: its `created`, and the ids with that same `created`. */
  newest: { created: string; ids: string[] } | null;
  /** Offsets seen processing, by id: their `created`. */
  pending: Record<string, string>;
  /** Only in a cursor written before a first run's first poll: its --since, where the next run starts again if that poll was not all delivered. */
  start?: string;
}

export function freshState(mode: 'test' | 'live', reference: string | null): WatchState {
  return { version: 1, mode, reference, newest: null, pending: {} };
}

/** An event's id: the same change gets the same id in every run, so a receiver can drop repeats. */
type EventId = (offsetId: string, type: EventType) => string;

/**
 * The ids `carbon watch` gives: `evt_` and a digest of the offset's id and the type (node:crypto,
 * loaded when first asked), 24 characters; an event of a sandbox's offset (`off_sandbox…`) says so as
 * its offset does, `evt_sandbox` and 17 of them, so a receiver that keeps only the id can tell it.
 */
export async function eventIds(): Promise<EventId> {
  const { createHash } = await import('node:crypto');
  return (offsetId, type) => {
    const digest = createHash('sha256').update(`${offsetId}:${type}`).digest('base64url');
    return offsetId.startsWith(SANDBOX_OFFSET) ? `evt_sandbox${digest.slice(0, 17)}` : `evt_${digest.slice(0, 24)}`;
  };
}
const SANDBOX_OFFSET = 'off_sandbox';

export interface PollOptions {
  /** The first poll of a run without a cursor: what exists now is the baseline, not news. */
  baseline: boolean;
  /** --since (ms): older offsets are not followed; on a baseline poll, newer ones are replayed. */
  since: number | null;
  now: () => string;
  eventId: EventId;
  /** Whether an offset is still in the ledger (the API's GET /offsets/{id}). */
  exists: (id: string) => Promise<boolean>;
  /** A line for a person: the ledger went back (a reset, a snapshot loaded), or an offset followed is gone. */
  warn: (line: string) => void;
}

const settledType = (o: Offset): EventType | null =>
  o.status === 'placed' ? 'offset.placed' : o.status === 'refunded' ? 'offset.refunded' : null;

/**
 * Walks `offsets` (newest first) against `state`, updating it, and returns the events found,
 * oldest offset first, each offset's own events in the order they happened.
 */
export async function poll(state: WatchState, offsets: AsyncIterable<Offset>, options: PollOptions): Promise<WatchEvent[]> {
  const { baseline, since, eventId } = options;
  let newest = state.newest;
  const pendingTimes = Object.values(state.pending).map((c) => Date.parse(c));
  const sinceAt = since ?? Number.NEGATIVE_INFINITY;
  // Below this nothing can have changed: older than the newest seen (or --since) and than every
  // pending offset. A pending one is followed to its end however old: a cursor kept from an earlier
  // run (a job rerun hours later with the same --since 1h) holds offsets older than --since now.
  let floor = baseline ? sinceAt : Math.min(Math.max(sinceAt, Date.parse(newest?.created ?? '1970-01-01T00:00:00Z')), ...pendingTimes);
  const seen = new Set<string>();
  const found: WatchEvent[][] = [];
  let top: { created: string; ids: string[] } | null = null;
  const event = (o: Offset, type: EventType): WatchEvent => ({
    id: eventId(o.id, type),
    object: 'event',
    type,
    created: type === 'offset.created' ? o.created : type === 'offset.placed' && o.placed ? o.placed : options.now(),
    data: { object: o },
  });
  for await (const o of offsets) {
    const created = Date.parse(o.created);
    if (seen.size === 0 && !baseline && (await wentBack(created, newest, options))) {
      newest = null;
      floor = Math.min(sinceAt, ...pendingTimes);
    }
    if (created < floor) break;
    seen.add(o.id);
    // Older than --since and not followed: walked past, on the way to an older pending offset.
    if (created < sinceAt && !(o.id in state.pending)) continue;
    if (top === null) top = { created: o.created, ids: [o.id] };
    else if (created === Date.parse(top.created)) top.ids.push(o.id);
    const newestAt = newest === null ? null : Date.parse(newest.created);
    const isNew = baseline
      ? since !== null
      : newestAt === null || created > newestAt || (created === newestAt && !newest!.ids.includes(o.id));
    const settled = settledType(o);
    const events: WatchEvent[] = [];
    if (isNew) {
      events.push(event(o, 'offset.created'));
      if (settled !== null) events.push(event(o, settled));
    } else if (o.id in state.pending && settled !== null) {
      events.push(event(o, settled));
    }
    if (settled === null) state.pending[o.id] = o.created;
    else delete state.pending[o.id];
    if (events.length > 0) found.push(events);
  }
  letGo(state, seen, options.warn);
  const at = (x: { created: string }) => Date.parse(x.created);
  if (newest === null && state.newest !== null) state.newest = top;
  else if (top !== null && (newest === null || at(top) > at(newest))) state.newest = top;
  else if (top !== null && newest !== null && at(top) === at(newest))
    state.newest = { created: newest.created, ids: [...new Set([...newest.ids, ...top.ids])] };
  return found.reverse().flat();
}

/**
 * Whether the ledger's newest offset (created at `created`) is older than the newest seen, which is
 * gone: the ledger went back (a sandbox reset, a snapshot loaded; nothing else takes an offset
 * away), and what it holds now is not what was seen. Then every offset in it is sent (at least
 * once: a repeat has the same event id), none passed by for its time. Older but the newest seen
 * still there: the clocks of two instances of one ledger differ, nothing went back.
 */
async function wentBack(created: number, newest: WatchState['newest'], options: PollOptions): Promise<boolean> {
  if (newest === null || created >= Date.parse(newest.created) || (await options.exists(newest.ids[0]!))) return false;
  options.warn('the ledger went back (a sandbox reset or a snapshot loaded): the events of every offset in it are sent again.');
  return true;
}

/**
 * Every offset down to the floor was walked (`seen`): one followed that was not among them is no
 * longer in the ledger (a reset, a snapshot loaded), and would be waited on for ever. Let go, and said.
 */
function letGo(state: WatchState, seen: Set<string>, warn: (line: string) => void): void {
  for (const id of Object.keys(state.pending)) {
    if (seen.has(id)) continue;
    delete state.pending[id];
    warn(`${id} is no longer in the ledger (a sandbox reset or a snapshot loaded): it is not followed any more.`);
  }
}
