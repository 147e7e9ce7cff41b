import { createInterface } from 'node:readline';
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
