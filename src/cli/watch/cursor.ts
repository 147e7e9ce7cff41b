import { accessSync, constants, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { CliError, usage } from '../errors.js';
import { EXIT } from '../exit-codes.js';
import { withReference } from '../render/format.js';
import type { WatchState } from './follow.js';

/** `carbon watch --cursor FILE`: the state of a run, read at its start and written after each poll whose events are all out. */

export function readCursor(file: string, mode: 'test' | 'live', reference: string | null): WatchState | null {
  if (file === '') throw usage('--cursor needs a file (it is made on the first run), and was given an empty name.');
  // Written beside itself (a temporary file renamed into place): a directory that is missing or
  // cannot be written is refused now, before the first poll, not after it.
  try {
    accessSync(dirname(file), constants.W_OK);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why =
      code === 'ENOENT' ? 'there is no such directory' : code === 'EACCES' ? 'it cannot be written' : (code ?? (err as Error).message);
    throw usage(`Cannot keep the cursor in ${dirname(file)}: ${why}.`, 'Give --cursor a file in a directory you can write.');
  }
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    const code = (err as NodeJS.ErrnoException).code ?? '';
    const said: Record<string, string> = {
      EISDIR: 'it is a directory',
      ENOTDIR: `${dirname(file)} is a file, not a directory`,
      EACCES: 'permission denied',
    };
    const why = said[code] ?? (code || (err as Error).message);
    throw usage(`Cannot read the cursor ${file}: ${why}.`, 'Give --cursor a file (it is made on the first run).');
  }
  let state: WatchState;
  try {
    state = JSON.parse(text) as WatchState;
  } catch {
    throw usage(`The cursor ${file} is not a cursor carbon watch wrote (not JSON).`, 'Delete it to start afresh.');
  }
  if (state?.version !== 1 || typeof state.pending !== 'object' || state.pending === null)
    throw usage(`The cursor ${file} is not a cursor carbon watch wrote.`, 'Delete it to start afresh.');
  if (state.mode !== mode || state.reference !== reference) {
    const what = (m: string, r: string | null) => `${m} offsets${r === null ? '' : ` ${withReference(r)}`}`;
    throw usage(
      `The cursor ${file} follows ${what(state.mode, state.reference)}, not ${what(mode, reference)}.`,
      'Give the same --live/--test and --reference, or another --cursor file.',
    );
  }
  return state;
}

/** Written whole and renamed into place: a run killed mid-write leaves the previous cursor. */
export function writeCursor(file: string, state: WatchState): void {
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, `${JSON.stringify(state)}\n`, { mode: 0o600 });
    renameSync(tmp, file);
  } catch (err) {
    throw new CliError(
      `Cannot write the cursor ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}.`,
      EXIT.failure,
      'cursor_unwritable',
      'Give --cursor a file in a directory you can write.',
    );
  }
}

/**
 * Where a run starts: the cursor's state, or a fresh one whose first poll is a baseline (from
 * `since`, replayed). A fresh run with --since and --cursor writes that start before its first
 * poll, so a run stopped in it (its events not all delivered, or killed) leaves a cursor from which
 * the next run replays them, with or without --since, not one that passes them by. A cursor that
 * holds a start begins this run there (or at --since, if earlier).
 */
export function beginCursor(
  file: string | undefined,
  resumed: WatchState | null,
  since: number | null,
  fresh: WatchState,
): { initial: WatchState; resumed: boolean; since: number | null } {
  if (resumed !== null && resumed.start === undefined) return { initial: resumed, resumed: true, since };
  const start = resumed?.start === undefined ? null : Date.parse(resumed.start);
  const from = start === null ? since : Math.min(start, since ?? start);
  if (file !== undefined && from !== null) writeCursor(file, { ...fresh, start: new Date(from).toISOString() });
  return { initial: fresh, resumed: false, since: from };
}
