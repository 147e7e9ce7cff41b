/**
 * Ctrl-C (SIGINT) and SIGTERM stop a long command the same way (exit 130, one plain line): a CI
 * job that times out, or a service manager, sends SIGTERM, and its log should still say what was
 * done. The line names SIGTERM when that was it: it is not the user's own Ctrl-C.
 */

/** Calls `heard` with the signal on each SIGINT or SIGTERM, until the function it returns is called. */
export function onStopSignal(heard: (signal: NodeJS.Signals) => void): () => void {
  process.on('SIGINT', heard);
  process.on('SIGTERM', heard);
  return () => {
    process.off('SIGINT', heard);
    process.off('SIGTERM', heard);
  };
}

/** The signal as a stopped command's line names it. */
export const stopName = (signal: NodeJS.Signals | null | undefined): 'SIGTERM' | 'Ctrl-C' => (signal === 'SIGTERM' ? 'SIGTERM' : 'Ctrl-C');

/** ` (SIGTERM)` after a stopped command's first words when SIGTERM stopped it; nothing for the user's own Ctrl-C. */
export const bySigterm = (signal: NodeJS.Signals | null | undefined): string => (signal === 'SIGTERM' ? ' (SIGTERM)' : '');

/**
 * `work`, unless Ctrl-C or SIGTERM comes first: then the error `stopped` makes for the signal
 * (exit 130, one plain line saying what was and was not done), where Node's own end says nothing.
 */
export async function untilStopped<T>(work: Promise<T>, stopped: (signal: NodeJS.Signals) => Error): Promise<T> {
  let release = () => {};
  const stop = new Promise<never>((_, reject) => {
    release = onStopSignal((signal) => reject(stopped(signal)));
  });
  try {
    return await Promise.race([work, stop]);
  } finally {
    release();
  }
}
