import type { RunningServer } from './server.js';

/**
 * Closes `server` gracefully on SIGINT, SIGTERM or SIGHUP (the terminal or ssh session it was
 * started from went away, as `… &` from a shell is left: Node's own end would drop the requests in
 * flight and the journal's last entries unsaid); a second signal cuts requests in flight off
 * at once, and tells `onStopNow` (the CLI ends the process soon after, whether or not the ledger
 * has answered). Otherwise the process ends on its own once nothing is left open (no process.exit
 * here: the CLI owns the exit). Returns a function that removes the handlers.
 */
export function closeOnSignals(
  server: RunningServer,
  options: { signals?: NodeJS.Signals[]; log?: (line: string) => void; onClosed?: () => void; onStopNow?: () => void } = {},
): () => void {
  const signals = options.signals ?? ['SIGINT', 'SIGTERM', 'SIGHUP'];
  let count = 0;
  const handler = (signal: NodeJS.Signals) => {
    count++;
    if (count === 1) {
      options.log?.(`${signal}: closing (send it again to stop at once)`);
      void server.close().then(() => {
        remove();
        options.onClosed?.();
      });
    } else {
      options.log?.(`${signal}: stopping now`);
      void server.terminate();
      options.onStopNow?.();
    }
  };
  const remove = () => {
    for (const s of signals) process.off(s, handler);
  };
  for (const s of signals) process.on(s, handler);
  return remove;
}
