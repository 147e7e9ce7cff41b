/**
 * Whose turn it is to use a ledger file in this process. Each connection runs one transaction at a
 * time; two connections of one process on one file (the library opened twice on one directory)
 * share a turn too. Otherwise the second's BEGIN IMMEDIATE waits in SQLite's busy handler, which
 * sleeps on the thread: the first's commit, on that same thread, never comes, and both wait the
 * whole busy timeout (5 s) before one fails "locked by another process". Processes still serialise
 * on SQLite's own lock.
 */
export interface Turn {
  running: Promise<unknown> | null;
}

const turns = new Map<string, Turn & { users: number }>();

/** The turn of the file `file` names (its device and inode), shared with the process's other connections to it. */
export function takeTurn(file: string): Turn {
  let turn = turns.get(file);
  if (turn === undefined) {
    turn = { running: null, users: 0 };
    turns.set(file, turn);
  }
  turn.users++;
  return turn;
}

/** A connection to `file` closed: the turn goes with the last one. */
export function leaveTurn(file: string): void {
  const turn = turns.get(file);
  if (turn !== undefined && --turn.users === 0) turns.delete(file);
}

/** A turn of its own, for a ledger no other connection can open (in memory). */
export const ownTurn = (): Turn => ({ running: null });
