import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { CliError } from './errors.js';
import { EXIT } from './exit-codes.js';
import type { Output } from './output.js';

/**
 * Asks yes/no on stderr, and returns only on yes. Only ever called when stdin and stderr are
 * terminals. No, Ctrl-C and the end of input alike stop the command with `cancelled` (what was
 * not done): the user's own choice, exit 130 and one plain line, not an error.
 */
export function confirmOrStop(out: Output, question: string, cancelled: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const rl = createInterface({ input: process.stdin, output: out.stderr });
    const stop = () => reject(new CliError(cancelled, EXIT.interrupted, 'cancelled'));
    let answered = false;
    rl.on('SIGINT', () => {
      out.stderr.write('\n');
      rl.close();
    });
    rl.on('close', () => {
      if (!answered) stop();
    });
    rl.question(`${question} [y/N] `, (answer) => {
      answered = true;
      rl.close();
      if (/^y(es)?$/i.test(answer.trim())) resolve();
      else stop();
    });
  });
}

/**
 * Asks for a secret on stderr and reads one line from the terminal without echoing it (a key
 * typed or pasted must not stay on the screen or in the scrollback). Only called when stdin is a
 * terminal. Ctrl-C and the end of input stop the command with `cancelled`, as confirmOrStop does.
 */
export function askHidden(out: Output, question: string, cancelled: string): Promise<string> {
  return new Promise((resolve, reject) => {
    // readline echoes what is typed to its output: the question goes through, the typing does not.
    let muted = false;
    const screen = new Writable({
      write(chunk, _encoding, done) {
        if (!muted) out.stderr.write(chunk);
        done();
      },
    });
    const rl = createInterface({ input: process.stdin, output: screen, terminal: true });
    let answered = false;
    rl.on('SIGINT', () => rl.close());
    rl.on('close', () => {
      if (answered) return;
      out.stderr.write('\n');
      reject(new CliError(cancelled, EXIT.interrupted, 'cancelled'));
    });
    rl.question(question, (answer) => {
      answered = true;
      out.stderr.write('\n');
      rl.close();
      resolve(answer.trim());
    });
    muted = true;
  });
}
