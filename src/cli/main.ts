import { CommanderError } from 'commander';
import type { Context } from './context.js';
import { usage } from './errors.js';
import { EXIT } from './exit-codes.js';
import { buildProgram } from './registry.js';
import { reportError } from './report-error.js';
import { createdStreams, stderr } from './stdio.js';

/** Runs the CLI and exits with the documented code: the one place that ends the process. */
export async function main(argv: string[]): Promise<never> {
  // The Context of the command that ran, if one did, so its engine is released whatever happened.
  let running: Context | undefined;
  // `carbon help X` needs only X in the tree, as `carbon X --help` does.
  const named = argv[0] === 'help' && argv.length > 1 ? argv[1] : argv[0];
  const program = buildProgram(named, (ctx) => (running = ctx));
  const io = {
    json: argv.includes('--json'),
    env: process.env,
    get stderr() {
      return stderr();
    },
    ...(argv.includes('--no-color') ? { color: false } : {}),
  };
  let code: number = EXIT.ok;
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) {
      const shown = ['commander.helpDisplayed', 'commander.version', 'commander.help'].includes(err.code);
      // A usage error from commander is reported like every other error: one line, or the envelope.
      code = shown ? EXIT.ok : reportError(usage(err.message.replace(/^error: /, ''), '(add --help for usage)'), io);
    } else {
      const settings = running?.settings;
      code = reportError(err, io, settings === undefined ? undefined : { mode: settings.mode, engine: settings.engine });
    }
  }
  try {
    await running?.close();
  } catch {
    // Closing a handle cannot change what the command did.
  }
  // process.exit() drops output still queued for a slow pipe reader (`carbon list --all --json | jq`
  // lost its last offsets under load), so wait until both streams have handed everything over.
  // Only the streams that were created: most commands never create stderr, and many not stdout (stdio.ts).
  await Promise.all(createdStreams().map(flushed));
  process.exit(code);
}

/** Resolves once everything written so far to `stream` has been handed to the OS (or it failed). */
function flushed(stream: NodeJS.WriteStream): Promise<void> {
  return new Promise((resolve) => {
    if (stream.destroyed || stream.writableLength === 0) return resolve();
    stream.write('', () => resolve());
  });
}

// Not `await`: the CLI is built as CommonJS (see scripts/build.mjs); main() ends the process itself.
void main(process.argv.slice(2));
