import { spawn } from 'node:child_process';
import type { Context } from './context.js';

/** Whether a browser can be opened here: a desktop (macOS, Windows) or a display on Linux. */
export function hasDisplay(env: NodeJS.ProcessEnv = process.env): boolean {
  return process.platform === 'darwin' || process.platform === 'win32' || Boolean(env.DISPLAY || env.WAYLAND_DISPLAY);
}

/** Opens `target` in the default browser; `shown` is what the messages name (a link may hold a secret). */
export function openInBrowser(ctx: Context, target: string, shown: string = target): void {
  const opener = process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer' : 'xdg-open';
  const child = spawn(opener, [target], { detached: true, stdio: 'ignore' });
  child.on('error', () => ctx.out.warn(`could not run ${opener}; open ${shown} yourself`));
  child.unref();
  ctx.out.info(`Opening ${shown}`);
}
