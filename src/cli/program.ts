import { Command, Option } from 'commander';
import pkg from '../../package.json' with { type: 'json' };
import type { Context } from './context.js';
import { EXIT_CODES_HELP } from './exit-codes.js';
import type { GlobalOptions } from './settings.js';

/**
 * The carbon command line: every command and option (cheap: commander only). A command's
 * implementation, and whatever heavy modules it needs, load only when that command runs.
 */

type Handler = (ctx: Context, ...args: never[]) => Promise<void>;
type Loader = () => Promise<{ run: Handler }>;

/** The context of the command that ran, so main() can release its engine whatever happened. */
export let activeContext: Context | undefined;

/** Wraps a lazily loaded command: builds the context, runs it, and leaves errors to main(). */
function action(load: Loader) {
  return async (...args: unknown[]) => {
    const command = args.at(-1) as Command;
    const globals = command.optsWithGlobals<GlobalOptions & Record<string, unknown>>();
    const positionals = args.slice(0, -2);
    const [{ run }, { Context }, { Output }, { resolveSettings }] = await Promise.all([
      load(),
      import('./context.js'),
      import('./output.js'),
      import('./settings.js'),
    ]);
    const out = new Output({ json: Boolean(globals.json), ...(globals.color === false ? { color: false } : {}) });
    const ctx = new Context(resolveSettings(globals), out);
    activeContext = ctx;
    if (ctx.settings.apiKeySource === 'flag') {
      out.warn('an API key given with --api-key can be read by other users (ps) and stays in shell history; prefer CARBON_API_KEY or `carbon config set`.');
    }
    await (run as (ctx: Context, ...rest: unknown[]) => Promise<void>)(ctx, ...positionals, command.opts());
  };
}

const examples = (...lines: string[]) => `\nExamples:\n${lines.map((l) => `  $ ${l}`).join('\n')}\n`;

export function buildProgram(): Command {
  const program = new Command('carbon')
    .description('Buy carbon offsets from a prepaid balance: from the live API, or from a full local model of it.')
    .version(pkg.version, '-v, --version', 'print the version')
    .option('--json', 'print the API\'s JSON object (errors: the JSON envelope on stderr)')
    .option('--profile <name>', 'use this profile (env CARBON_PROFILE)')
    .option('--live', 'use the live key of the profile for this call')
    .option('--test', 'use the test key of the profile for this call')
    .option('--local', 'use the local model even if a base URL is set')
    .option('--base-url <url>', 'the API\'s base URL, ending in /api/v1 (env CARBON_BASE_URL)')
    .option('--api-key <key>', 'API key (prefer env CARBON_API_KEY: flags show up in ps)')
    .option('--max-retries <n>', 'retries of failed requests (env CARBON_MAX_RETRIES, default 2)')
    .option('--timeout <seconds>', 'per request timeout, and how long --wait waits (env CARBON_TIMEOUT)')
    .option('--allow-insecure-http', 'allow sending the key over http:// to a non-loopback host')
    .option('--no-color', 'no colour (also NO_COLOR=1)')
    .showHelpAfterError('(run with --help for usage)')
    .addHelpText(
      'after',
      `${examples('carbon buy --kg 500', 'carbon quote --amount 12.50', 'carbon list --json | jq \'.data[].id\'', 'carbon balance')}
Environment: CARBON_API_KEY, CARBON_BASE_URL, CARBON_PROFILE, CARBON_HOME (config and data),
CARBON_MAX_RETRIES, CARBON_TIMEOUT, NO_COLOR, FORCE_COLOR, CARBON_DEBUG=1 (stack traces).

${EXIT_CODES_HELP}
`,
    );

  const purchaseOptions = (cmd: Command) =>
    cmd
      .option('--kg <n>', 'kg of CO2 to offset (1 to 1,000,000)')
      .option('--amount-cents <n>', 'US cents to spend: buys the most whole kg that fits')
      .option('--amount <dollars>', 'dollars to spend, e.g. 12.50')
      .option('--reference <text>', 'your own label (1 to 200 characters; never public)');

  purchaseOptions(program.command('buy').description('buy offsets, charged to the balance'))
    .option('--idempotency-key <key>', 'make retries safe: the same key never buys twice (generated when absent)')
    .option('--wait', 'wait until the offset is placed or refunded')
    .option('--max-cents <n>', 'refuse, before buying, a purchase that would cost more than this')
    .option('-y, --yes', 'do not ask to confirm a live purchase')
    .addHelpText('after', examples('carbon buy --kg 500', 'carbon buy --amount 25 --reference flight-LHR-JFK --wait', 'carbon buy --kg 500 --live --yes --max-cents 2500'))
    .action(action(() => import('./commands/buy.js')));

  purchaseOptions(program.command('quote').description('what a purchase would buy and cost; buys nothing'))
    .addHelpText('after', examples('carbon quote --kg 500', 'carbon quote --amount-cents 1250 --json | jq .kg'))
    .action(action(() => import('./commands/quote.js')));

  program
    .command('list')
    .description('list offsets, newest first')
    .option('--limit <n>', 'offsets per page (1 to 100, default 10)')
    .option('--starting-after <id>', 'the page after this offset')
    .option('--reference <text>', 'only offsets with this reference')
    .option('--all', 'every offset, page by page, streamed (NDJSON with --json)')
    .addOption(new Option('--format <format>', 'output format').choices(['table', 'plain', 'json', 'csv']))
    .addHelpText('after', examples('carbon list', 'carbon list --json | jq \'.data[].id\'', 'carbon list --all --format csv > offsets.csv', 'carbon list --all --json | jq -s \'map(.kg) | add\''))
    .action(action(() => import('./commands/list.js')));

  program
    .command('show')
    .description('show one offset')
    .argument('<id>', 'the offset id (off_…)')
    .option('--wait', 'wait until it is placed or refunded')
    .addHelpText('after', examples('carbon show off_3x8…', 'carbon show off_3x8… --wait --timeout 300'))
    .action(action(() => import('./commands/show.js')));

  program
    .command('balance')
    .description('the prepaid balance of the key\'s mode')
    .addHelpText('after', examples('carbon balance', 'carbon balance --json | jq .available_cents'))
    .action(action(() => import('./commands/balance.js')));

  program
    .command('impact')
    .description('kg offset through the API, for the key\'s mode')
    .addHelpText('after', examples('carbon impact', 'carbon impact --live --json'))
    .action(action(() => import('./commands/impact.js')));

  return program;
}

