import { once } from 'node:events';
import type { Writable } from 'node:stream';
import { isatty } from 'node:tty';
import { redactSecrets } from '../service/keys.js';
import { stderr, stdout, stdoutIsFile, writeStdout } from './stdio.js';

export interface OutputOptions {
  stdout?: Writable & { isTTY?: boolean };
  stderr?: Writable & { isTTY?: boolean };
  env?: NodeJS.ProcessEnv;
  /** false for --no-color. */
  color?: boolean;
  json?: boolean;
}

/**
 * Whether to colour a stream, by the usual conventions: --no-color and NO_COLOR (non-empty) turn
 * it off; FORCE_COLOR turns it on, except FORCE_COLOR=0 or false, which turn it off (as chalk
 * and Node read it); otherwise colour only on a terminal.
 */
export function colorOn(isTTY: boolean, env: NodeJS.ProcessEnv, flag?: boolean): boolean {
  if (flag === false) return false;
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== '') return false;
  if (env.FORCE_COLOR !== undefined) return env.FORCE_COLOR !== '0' && env.FORCE_COLOR !== 'false';
  // A terminal that says it can do nothing (Emacs shells, some CI logs) gets plain text.
  if (env.TERM === 'dumb') return false;
  return isTTY;
}

/**
 * A CI job, by the variable CI services set (`CI=true`; GitHub Actions, GitLab, Buildkite, CircleCI
 * …); `CI=false` or `CI=0` says it is not one.
 */
export function inCi(env: NodeJS.ProcessEnv): boolean {
  const ci = env.CI?.trim().toLowerCase();
  return ci !== undefined && ci !== '' && ci !== '0' && ci !== 'false';
}

/**
 * All output goes through here: data to stdout, everything a person reads to stderr. It decides,
 * when first asked, what kind of reader is on each stream (gh's rules): a terminal gets tables and colour,
 * anything else plain tab-separated rows; NO_COLOR and --no-color turn colour off, FORCE_COLOR on.
 */
export class Output {
  readonly json: boolean;
  private readonly options: OutputOptions;
  private readonly env: NodeJS.ProcessEnv;
  private stdoutStream: (Writable & { isTTY?: boolean }) | undefined;
  private stderrStream: (Writable & { isTTY?: boolean }) | undefined;
  /** stream() writes with write(2), stdout being a file (decided at its first call). */
  private straight: boolean | undefined;

  constructor(options: OutputOptions = {}) {
    this.options = options;
    this.env = options.env ?? process.env;
    this.json = Boolean(options.json);
  }

  /** process.stdout unless given: created only when a command asks for it (stdio.ts). */
  get stdout(): Writable & { isTTY?: boolean } {
    return (this.stdoutStream ??= this.options.stdout ?? stdout());
  }

  /** process.stderr unless given: created only when something is written or asked of it. */
  get stderr(): Writable & { isTTY?: boolean } {
    return (this.stderrStream ??= this.options.stderr ?? stderr());
  }

  /** stdout is a terminal: tables and cards. Otherwise plain rows. */
  get interactive(): boolean {
    // Asked of the descriptor when the stream is not made yet: making it costs a few ms (stdio.ts).
    return this.stdoutStream === undefined && this.options.stdout === undefined ? isatty(1) : Boolean(this.stdout.isTTY);
  }

  get color(): boolean {
    return colorOn(this.interactive, this.env, this.options.color);
  }

  /** stderr is a terminal: spinners and prompts are allowed there. */
  get stderrInteractive(): boolean {
    return this.stderrStream === undefined && this.options.stderr === undefined ? isatty(2) : Boolean(this.stderr.isTTY);
  }

  /** stdin is a terminal: what is read from it is being typed. */
  get stdinTerminal(): boolean {
    return isatty(0);
  }

  /**
   * Why nobody can answer a question here, or undefined when a person can: stdin and stderr are
   * terminals, and this is no CI job. A CI runner may give a job a terminal (Buildkite does by
   * default, as `docker run -t` does), where a question would wait for the job's timeout.
   */
  get nobodyToAsk(): string | undefined {
    if (!this.stdinTerminal) return 'stdin is not a terminal';
    if (!this.stderrInteractive) return 'stderr is not a terminal';
    if (inCi(this.env)) return `CI=${this.env.CI} says this is a CI job`;
    return undefined;
  }

  /** Spinners redraw a line in place: only on a terminal that can (not TERM=dumb), and never with --json. */
  get spinners(): boolean {
    return this.stderrInteractive && this.env.TERM !== 'dumb' && !this.json;
  }

  get stderrColor(): boolean {
    return colorOn(this.stderrInteractive, this.env, this.options.color);
  }

  private write(text: string): void {
    if (this.options.stdout === undefined) writeStdout(text);
    else this.options.stdout.write(text);
  }

  /** Data: the only thing that goes to stdout. */
  data(text: string): void {
    this.write(text.endsWith('\n') ? text : `${text}\n`);
  }

  /**
   * Data made a batch at a time (`list --all`): a reader slower than the ledger (a pipe) is waited
   * for, not queued for. A file, or /dev/null, is written straight, without process.stdout (stdio.ts).
   */
  async stream(text: string): Promise<void> {
    this.straight ??= this.options.stdout === undefined && this.stdoutStream === undefined && stdoutIsFile();
    if (this.straight) return writeStdout(text);
    if (!this.stdout.write(text)) await once(this.stdout, 'drain');
  }

  /** One JSON document, the API's object exactly. */
  jsonDocument(value: unknown): void {
    this.write(`${JSON.stringify(value, null, 2)}\n`);
  }

  /** For people: progress, notes, confirmations. */
  info(text: string): void {
    this.stderr.write(`${text}\n`);
  }

  /**
   * A warning, with any key in it masked as an error's line masks it: a warning may name what was
   * typed (a base URL, a --forward-to URL), and a log keeps warnings as it keeps errors.
   */
  warn(text: string): void {
    this.stderr.write(`${this.stderrColor ? '\u001b[33mwarning:\u001b[39m' : 'warning:'} ${redactSecrets(text)}\n`);
  }
}
