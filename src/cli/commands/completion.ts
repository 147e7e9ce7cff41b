import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pkg from '../../../package.json' with { type: 'json' };
import { CliError, usage } from '../errors.js';
import { EXIT } from '../exit-codes.js';
import { stdout } from '../stdio.js';

/**
 * `carbon completion SHELL`: prints the completion script for a shell.
 *
 * The scripts in the package's completions/ directory are the one source of truth: this command
 * prints those files byte for byte, found from this module's own location (dist/chunks/… when
 * built, src/cli/commands/ from source, node_modules/carbon-offsets-cli/… when installed) by
 * walking up to the directory whose package.json is this package's. The scripts themselves are
 * thin: everything they offer comes from `carbon __complete` (commands/complete.ts), which reads
 * the command tree from commander, so a new command or option needs no change to any script.
 */

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

/** The file in completions/ for each shell, named as each shell's completion directory expects. */
export const SCRIPT_FILES: Readonly<Record<Shell, string>> = {
  bash: 'carbon.bash',
  zsh: '_carbon',
  fish: 'carbon.fish',
};

export function isShell(name: string): name is Shell {
  return (SHELLS as readonly string[]).includes(name);
}

/** The completions/ directory of this package, found by walking up from `from`. */
export function completionsDir(from: string = fileURLToPath(import.meta.url)): string {
  let dir = dirname(from);
  for (;;) {
    const candidate = join(dir, 'completions');
    if (isThisPackage(dir) && existsSync(candidate)) return candidate;
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  throw new CliError(
    `The completion scripts were not found next to this installation of carbon (looked upwards from ${dirname(from)}).`,
    EXIT.failure,
    'cli_error',
    'Reinstall carbon: the package ships them in its completions/ directory.',
  );
}

function isThisPackage(dir: string): boolean {
  try {
    return (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: unknown }).name === pkg.name;
  } catch {
    return false;
  }
}

/** The script for `shell`, exactly as shipped in completions/. Unknown shell: a usage error. */
export function completionScript(shell: string, dir?: string): string {
  if (!isShell(shell)) {
    throw usage(`carbon has completion scripts for ${SHELLS.join(', ')}, not "${shell}".`, 'Run `carbon completion --help` for how to install one.');
  }
  return readFileSync(join(dir ?? completionsDir(), SCRIPT_FILES[shell]), 'utf8');
}

export async function run(shell: string): Promise<void> {
  stdout().write(completionScript(shell));
}
