import type { Writable } from 'node:stream';

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
  return isTTY;
}

/**
 * All output goes through here: data to stdout, everything a person reads to stderr. It decides,
 * once, what kind of reader is on each stream (gh's rules): a terminal gets tables and colour,
 * anything else plain tab-separated rows; NO_COLOR and --no-color turn colour off, FORCE_COLOR on.
 */
export class Output {
  readonly stdout: Writable & { isTTY?: boolean };
  readonly stderr: Writable & { isTTY?: boolean };
  /** stdout is a terminal: tables and cards. Otherwise plain rows. */
  readonly interactive: boolean;
  /** stderr is a terminal: spinners and prompts are allowed there. */
  readonly stderrInteractive: boolean;
  readonly color: boolean;
  readonly stderrColor: boolean;
  readonly json: boolean;

  constructor(options: OutputOptions = {}) {
    const env = options.env ?? process.env;
    this.stdout = options.stdout ?? process.stdout;
    this.stderr = options.stderr ?? process.stderr;
    this.interactive = Boolean(this.stdout.isTTY);
    this.stderrInteractive = Boolean(this.stderr.isTTY);
    this.color = colorOn(this.interactive, env, options.color);
    this.stderrColor = colorOn(this.stderrInteractive, env, options.color);
    this.json = Boolean(options.json);
  }

  /** Data: the only thing that goes to stdout. */
  data(text: string): void {
    this.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  }

  /** One JSON document, the API's object exactly. */
  jsonDocument(value: unknown): void {
    this.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  }

  /** For people: progress, notes, confirmations. */
  info(text: string): void {
    this.stderr.write(`${text}\n`);
  }

  warn(text: string): void {
    this.stderr.write(`${this.stderrColor ? '\u001b[33mwarning:\u001b[39m' : 'warning:'} ${text}\n`);
  }
}
