import { spawn } from 'node:child_process';
import type { Context } from './context.js';
import { CliError } from './errors.js';
import { EXIT } from './exit-codes.js';

/** Whether a browser can be opened here: a desktop (macOS, Windows) or a display on Linux. */
export function hasDisplay(env: NodeJS.ProcessEnv = process.env): boolean {
  return process.platform === 'darwin' || process.platform === 'win32' || Boolean(env.DISPLAY || env.WAYLAND_DISPLAY);
}

/** How long the opener is waited for: one still running then (a browser it started in the foreground) has opened it. */
const OPENER_WAIT_MS = 2000;

/**
 * Opens `target` in the default browser; `shown` is what the messages name (a link may hold a
 * secret). An opener that cannot run, or exits with a failure (xdg-open with no browser to hand
 * it to), fails the command, as `gh browse` does: exit 1, the address on stdout to open by hand.
 */
export async function openInBrowser(ctx: Context, target: string, shown: string = target): Promise<void> {
  const opener = process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer' : 'xdg-open';
  ctx.out.info(`Opening ${shown}`);
  const failed = await new Promise<string | undefined>((resolve) => {
    const child = spawn(opener, [target], { detached: true, stdio: 'ignore' });
    const waited = setTimeout(() => {
      child.unref();
      resolve(undefined);
    }, OPENER_WAIT_MS);
    const done = (why: string | undefined) => {
      clearTimeout(waited);
      resolve(why);
    };
    child.on('error', () => done(`${opener} could not be run`));
    child.on('exit', (code, signal) => done(code === 0 ? undefined : `${opener} exited with ${code ?? signal}`));
  });
  if (failed === undefined) return;
  ctx.out.data(target);
  throw new CliError(`Could not open ${shown}: ${failed}. Its address is on stdout: open it yourself.`, EXIT.failure, 'browser_error');
}
