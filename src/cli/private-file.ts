import { chmodSync, statSync } from 'node:fs';
import { CliError } from './errors.js';
import { EXIT } from './exit-codes.js';
import { stderr } from './stdio.js';

/** Takes away what group and others may do with `path`, saying so once on stderr; refuses when it cannot. */
export function tighten(path: string, mode: number): void {
  let current: number;
  try {
    current = statSync(path).mode & 0o777;
  } catch {
    return;
  }
  if ((current & 0o077) === 0) return;
  try {
    chmodSync(path, mode);
  } catch (err) {
    throw new CliError(
      `${path} is readable by others (mode ${current.toString(8)}) and cannot be tightened (${(err as NodeJS.ErrnoException).code ?? 'error'}).`,
      EXIT.failure,
      'config_error',
      `It holds API keys: make it ${mode.toString(8)} (chmod ${mode.toString(8)} ${path}), or set CARBON_HOME to a directory of your own.`,
    );
  }
  stderr().write(
    `carbon: ${path} was readable by others (mode ${current.toString(8)}); it holds API keys, so it is now ${mode.toString(8)}.\n`,
  );
}
