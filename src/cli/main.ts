import { CommanderError } from 'commander';
import { refuseNonUtf8Arguments } from './argv-text.js';
import { usage } from './errors.js';
import { EXIT } from './exit-codes.js';
import { unknownCommandHint } from './groups.js';
import { buildProgram } from './registry.js';
import { reportError } from './report-error.js';
import { type ErrorIO, runToExit } from './run-to-exit.js';

/** Runs the CLI through commander and exits with the documented code. */
export function main(argv: string[]): Promise<never> {
  // `carbon help X` needs only X in the tree, as `carbon X --help` does.
  const named = argv[0] === 'help' && argv.length > 1 ? argv[1] : argv[0];
  return runToExit(
    argv,
    async (opened) => {
      refuseNonUtf8Arguments(argv);
      await buildProgram(named, opened).parseAsync(argv, { from: 'user' });
    },
    commanderError,
  );
}

/** commander's help and version end the run with 0; its usage errors are reported like every other error. */
function commanderError(err: unknown, io: ErrorIO): number | undefined {
  if (!(err instanceof CommanderError)) return undefined;
  if (['commander.helpDisplayed', 'commander.version', 'commander.help'].includes(err.code)) return EXIT.ok;
  // One line, or the envelope; commander puts its suggestion on a line of its own (`\n(Did you mean logs?)`).
  const message = err.message.replace(/^error: /, '').replace(/\s*\n\s*/g, ' ');
  // `-5m`, `-1.5`: a value that starts with - and a digit, read as a flag: the way to give it as a value, which then gets its own answer.
  const dashed = err.code === 'commander.unknownOption' ? /'(-\d[^']*)'/.exec(err.message)?.[1] : undefined;
  const hint =
    err.code === 'commander.unknownCommand'
      ? unknownCommandHint(err)
      : dashed !== undefined
        ? `(a value that starts with - is read as a flag: put -- before it, as in \`-- ${dashed}\`, or add --help for usage)`
        : '(add --help for usage)';
  return reportError(usage(message, hint), io);
}

// Not `await`: the CLI is built as CommonJS (see scripts/build.mjs); main() ends the process itself.
void main(process.argv.slice(2));
