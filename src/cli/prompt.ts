import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { CliError } from './errors.js';
import { EXIT } from './exit-codes.js';
import type { Output } from './output.js';
import { bySigterm, onStopSignal } from './stop-signals.js';

/**
 * Asks yes/no on stderr, and returns only on yes. Only ever called when a person can answer
 * (Output.nobodyToAsk: stdin and stderr are terminals, and no CI job). No, Ctrl-C, SIGTERM and
 * the end of input alike stop the command with `cancelled` (what was not done, "Cancelled; …"):
 * the user's own choice, or a stop, exit 130 and one plain line, not an error; the line names
 * SIGTERM when that was it (stop-signals.ts).
 */
export function confirmOrStop(out: Output, question: string, cancelled: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const rl = createInterface({ input: process.stdin, output: out.stderr });
    let answered = false;
    let signal: NodeJS.Signals | undefined;
    const stopListening = onStopSignal((heard) => {
      signal = heard;
      rl.close();
    });
    const stop = () => reject(cancel(cancelled, signal));
    rl.on('SIGINT', () => rl.close());
    // Unanswered (Ctrl-C, SIGTERM, or the input's end: Ctrl-D): the line the question is on is ended first.
    rl.on('close', () => {
      stopListening();
      if (answered) return;
      out.stderr.write('\n');
      stop();
    });
    rl.question(`${question} [y/N] `, (answer) => {
      answered = true;
      rl.close();
      if (/^y(es)?$/i.test(answer.trim())) resolve();
      else stop();
    });
  });
}

/** What was not done, as the stop that came says it: "Cancelled (SIGTERM); nothing was bought." */
function cancel(cancelled: string, signal: NodeJS.Signals | undefined): CliError {
  return new CliError(cancelled.replace(/^Cancelled/, `Cancelled${bySigterm(signal)}`), EXIT.interrupted, 'cancelled');
}

/**
 * Asks for a secret on stderr and reads one line from the terminal without echoing it (a key
 * typed or pasted must not stay on the screen or in the scrollback). Only called when stdin is a
 * terminal. Ctrl-C, SIGTERM and the end of input stop the command with `cancelled`, as confirmOrStop does.
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
    let signal: NodeJS.Signals | undefined;
    const stopListening = onStopSignal((heard) => {
      signal = heard;
      rl.close();
    });
    rl.on('SIGINT', () => rl.close());
    rl.on('close', () => {
      stopListening();
      if (answered) return;
      out.stderr.write('\n');
      reject(cancel(cancelled, signal));
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
