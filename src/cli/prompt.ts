import { createInterface } from 'node:readline';
import { CliError } from './errors.js';
import { EXIT } from './exit-codes.js';
import type { Output } from './output.js';

/**
 * Asks yes/no on stderr. Only ever called when stdin and stderr are terminals. Ctrl-C (or the end
 * of input) at the question is "cancelled": nothing done, exit 130.
 */
export function confirmPrompt(out: Output, question: string): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const rl = createInterface({ input: process.stdin, output: out.stderr });
    let answered = false;
    rl.on('SIGINT', () => {
      out.stderr.write('\n');
      rl.close();
    });
    rl.on('close', () => {
      if (!answered) reject(new CliError('Cancelled; nothing was done.', EXIT.interrupted, 'cancelled'));
    });
    rl.question(`${question} [y/N] `, (answer) => {
      answered = true;
      rl.close();
      resolve(/^y(es)?$/i.test(answer.trim()));
    });
  });
}
