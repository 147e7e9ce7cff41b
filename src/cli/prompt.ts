import { createInterface } from 'node:readline/promises';
import type { Output } from './output.js';

/** Asks yes/no on stderr. Only ever called when stdin and stderr are terminals. */
export async function confirmPrompt(out: Output, question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: out.stderr });
  try {
    const answer = await rl.question(`${question} [y/N] `);
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}
