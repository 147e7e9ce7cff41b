import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pkg from '../../../../package.json' with { type: 'json' };
import { CliError, usage } from '../../errors.js';
import { EXIT } from '../../exit-codes.js';
import { stderr, stdout } from '../../stdio.js';
import { SHELLS, type Shell } from './index.js';

/**
 * `carbon completion SHELL`: prints the completion script for a shell.
 *
 * The scripts in the package's completions/ directory are the one source of truth: this command
 * prints those files byte for byte, found from this module's own location (dist/ when built,
 * src/cli/commands/completion/ from source, node_modules/carbon-offsets-cli/… when installed) by
 * walking up to the directory whose package.json is this package's. The scripts themselves are
 * thin: everything they offer comes from `carbon __complete` (commands/complete/run.ts), which reads
 * the command tree from commander, so a new command or option needs no change to any script.
 */

/** The file in completions/ for each shell, named as each shell's completion directory expects. */
const SCRIPT_FILES: Readonly<Record<Shell, string>> = {
  bash: 'carbon.bash',
  zsh: '_carbon',
  fish: 'carbon.fish',
};

function isShell(name: string): name is Shell {
  return (SHELLS as readonly string[]).includes(name);
}

/** The completions/ directory of this package, found by walking up from `from`. */
function completionsDir(from: string = fileURLToPath(import.meta.url)): string {
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
function completionScript(shell: string, dir?: string): string {
  if (!isShell(shell)) {
    throw usage(
      `carbon has completion scripts for ${SHELLS.join(', ')}, not "${shell}".`,
      'Run `carbon completion --help` for how to install one.',
    );
  }
  return readFileSync(join(dir ?? completionsDir(), SCRIPT_FILES[shell]), 'utf8');
}

/**
 * Where each shell looks for a completion script of its own user (no root needed): bash-completion's
 * user directory, a directory for zsh's fpath, fish's completions directory.
 */
function installPath(shell: Shell, env: NodeJS.ProcessEnv = process.env): string {
  const home = env.HOME ?? homedir();
  if (shell === 'bash') return join(env.XDG_DATA_HOME || join(home, '.local', 'share'), 'bash-completion', 'completions', 'carbon');
  if (shell === 'zsh') return join(home, '.zfunc', '_carbon');
  return join(env.XDG_CONFIG_HOME || join(home, '.config'), 'fish', 'completions', 'carbon.fish');
}

/** Writes the script at `path`, its directory made first; a path that cannot be written: one line saying why. */
function writeScript(shell: Shell, path: string, script: string): void {
  try {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, script);
  } catch (err) {
    const { code, path: at } = err as NodeJS.ErrnoException;
    const why =
      code === 'EEXIST' || code === 'ENOTDIR'
        ? `${blocking(path) ?? at ?? dirname(path)} is a file, not a directory`
        : code === 'EISDIR'
          ? 'it is a directory'
          : code === 'EACCES' || code === 'EPERM' || code === 'EROFS'
            ? 'permission denied'
            : code === 'ENOSPC'
              ? 'the disk is full'
              : (code ?? (err as Error).message);
    throw new CliError(
      `Cannot install the ${shell} completion script in ${path}: ${why}.`,
      EXIT.failure,
      'cli_error',
      `Print it and put it where your shell looks: \`carbon completion ${shell} > FILE\`.`,
    );
  }
}

/** The nearest directory above `path` that is not one (a file in the way), if any. */
function blocking(path: string): string | undefined {
  for (let dir = dirname(path); dir !== dirname(dir); dir = dirname(dir)) {
    if (existsSync(dir)) return statSync(dir).isDirectory() ? undefined : dir;
  }
  return undefined;
}

export async function run(shell: string | undefined, flags: { install?: boolean } = {}): Promise<void> {
  if (!flags.install) {
    if (shell === undefined) throw usage('Name the shell: carbon completion bash|zsh|fish (or --install for the one you use).');
    stdout().write(completionScript(shell));
    return;
  }
  const chosen = shell ?? basename(process.env.SHELL ?? '');
  if (!isShell(chosen)) {
    throw usage(
      `Cannot tell which shell to install for${process.env.SHELL ? ` ($SHELL is ${process.env.SHELL})` : ''}: name it, as in carbon completion --install bash.`,
    );
  }
  const path = installPath(chosen);
  writeScript(chosen, path, completionScript(chosen));
  const after =
    chosen === 'zsh'
      ? `Add \`fpath=(~/.zfunc $fpath)\` before \`compinit\` in ${process.env.ZDOTDIR ? '$ZDOTDIR/.zshrc' : '~/.zshrc'} if it is not there, then open a new shell.`
      : 'Open a new shell to use it.';
  stderr().write(`Installed the ${chosen} completion script in ${path}. ${after}\n`);
}
