import { Argument, Command, Option } from 'commander';
import pkg from '../../package.json' with { type: 'json' };
import type { Context } from './context.js';
import { usage } from './errors.js';
import { EXIT_CODES_HELP } from './exit-codes.js';
import type { GlobalOptions } from './settings.js';
import { writeStdout } from './stdio.js';

/**
 * The carbon command line: every command and option (cheap: commander only). A command's
 * implementation, and whatever heavy modules it needs, load only when that command runs.
 */

type Handler = (ctx: Context, ...args: never[]) => Promise<void>;
type Loader = () => Promise<{ run: Handler }>;

/**
 * 'api' commands resolve every setting (keys, engine, retries). 'config' commands only need to
 * know where the config lives and which profile is meant: a broken CARBON_API_KEY or a profile
 * that does not exist yet must not stop `carbon config` from inspecting or fixing things.
 */
type SettingsKind = 'api' | 'config';

/** The context of the command that ran, so main() can release its engine whatever happened. */
export let activeContext: Context | undefined;

/** Wraps a lazily loaded command: builds the context, runs it, and leaves errors to main(). */
function action(load: Loader, kind: SettingsKind = 'api') {
  return async (...args: unknown[]) => {
    const command = args.at(-1) as Command;
    const globals = command.optsWithGlobals<GlobalOptions & Record<string, unknown>>();
    const positionals = args.slice(0, -2);
    const [{ run }, { Context }, { Output }, { resolveSettings, resolveConfigSettings, databasePasswordWarning }] = await Promise.all([
      load(),
      import('./context.js'),
      import('./output.js'),
      import('./settings.js'),
    ]);
    const out = new Output({ json: Boolean(globals.json), ...(globals.color === false ? { color: false } : {}) });
    const ctx = new Context(kind === 'config' ? resolveConfigSettings(globals) : resolveSettings(globals), out, process.env, Boolean(globals.verbose));
    activeContext = ctx;
    if (ctx.settings.apiKeySource === 'flag' || (kind === 'config' && globals.apiKey !== undefined)) {
      out.warn('an API key given with --api-key can be read by other users (ps) and stays in shell history; prefer CARBON_API_KEY or `carbon config set`.');
    }
    const passwordWarning = databasePasswordWarning(globals);
    if (passwordWarning !== undefined) out.warn(passwordWarning);
    await (run as (ctx: Context, ...rest: unknown[]) => Promise<void>)(ctx, ...positionals, command.opts());
  };
}

/** The commands a run may get alone (buildProgram's `only`); not help or the completion helpers. */
export const SOLO = new Set(['buy', 'quote', 'list', 'show', 'balance', 'impact', 'report', 'watch', 'open', 'api', 'config', 'sandbox', 'serve']);

const examples = (...lines: string[]) => `\nExamples:\n${lines.map((l) => `  $ ${l}`).join('\n')}\n`;

/** The global flags, by name only, wrapped to 80 columns: the end of every subcommand's help. */
function inheritedFlags(command: Command): string {
  let root = command;
  while (root.parent !== null) root = root.parent;
  const names = root.options.filter((o) => o.long !== '--version').map((o) => o.flags.replace(/^-\w, /, ''));
  const lines: string[] = [];
  for (const name of names) {
    const last = lines.at(-1);
    if (last !== undefined && last.length + name.length + 2 <= 78) lines[lines.length - 1] = `${last}  ${name}`;
    else lines.push(`  ${name}`);
  }
  return `Inherited flags (what each does: carbon help):\n${lines.join('\n')}\n`;
}

/** Picks one export of a command module as its `run` (sandbox and config have several). */
const pick = <M extends Record<string, unknown>>(load: () => Promise<M>, name: keyof M & string): Loader =>
  async () => ({ run: (await load())[name] as Handler });

/**
 * The program. With `only`, the name of the command a run asks for (main.ts passes it when it is
 * the first word), only that command is registered under the root: building all of them is about
 * a millisecond of every start-up. Help, completion and anything unrecognised get the whole tree.
 */
export function buildProgram(only?: string): Command {
  const wanted = (name: string) => only === undefined || !SOLO.has(only) || only === name;
  const program = new Command('carbon')
    // Set before any subcommand is created: subcommands copy these settings when they are made.
    // Without it a usage error in `carbon buy --nope` called process.exit(1) from inside commander
    // (exit 1 instead of the documented 2, and past main.ts). main.ts reports the error itself,
    // as one line (or the JSON envelope), so commander prints nothing of its own.
    .exitOverride()
    // --help and --version are written with write(2) while process.stdout does not exist (stdio.ts).
    .configureOutput({ outputError: () => {}, writeOut: writeStdout })
    // A command's help is its own usage, flags and examples; the global flags it also takes are
    // named briefly at the end (gh's INHERITED FLAGS) and explained once, in `carbon help`.
    .addHelpText('afterAll', ({ command }) => (command.parent === null ? '' : inheritedFlags(command)))
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
    .option('--database <url>', 'the local model\'s ledger in PostgreSQL: postgres://… (env CARBON_DATABASE_URL; default SQLite in CARBON_HOME)')
    .option('--database-schema <name>', 'the PostgreSQL schema (env CARBON_DATABASE_SCHEMA, or ?schema= in the URL; default carbon)')
    .option('--verbose', 'one line on stderr per HTTP request: method, URL, status, time, Request-Id, attempt (also CARBON_DEBUG=http)')
    .option('--no-color', 'no colour (also NO_COLOR=1)')
    .addHelpText(
      'after',
      `${examples('carbon buy --kg 500', 'carbon quote --amount 12.50', 'carbon list --json | jq \'.data[].id\'', 'carbon balance')}
Environment: CARBON_API_KEY, CARBON_BASE_URL, CARBON_PROFILE, CARBON_HOME (config and data),
CARBON_MAX_RETRIES, CARBON_TIMEOUT, NO_COLOR, FORCE_COLOR, CARBON_DEBUG=1 (stack traces).

${EXIT_CODES_HELP}
`,
    )
    // `--reference --wait` would take "--wait" as the reference and buy: an option's value that
    // is another option of the command is a usage error instead (a value may still start with
    // a dash: `--reference -x`, or `--reference=--wait` when meant).
    .hook('preAction', (_program, action) => {
      const known = new Set([...action.options, ...program.options].flatMap((o) => [o.long, o.short].filter((n): n is string => n !== undefined)));
      const argv = (program as unknown as { rawArgs: string[] }).rawArgs;
      for (let i = 0; i < argv.length - 1; i++) {
        const option = [...action.options, ...program.options].find((o) => o.long === argv[i] || o.short === argv[i]);
        const next = argv[i + 1]!;
        if (option !== undefined && (option.required || option.optional) && known.has(next)) {
          throw usage(`${argv[i]} needs a value, but "${next}" is an option.`, `Give the value after ${argv[i]} (or write ${argv[i]}=${next} if that is the value).`);
        }
      }
    });

  const purchaseOptions = (cmd: Command) =>
    cmd
      .option('--kg <n>', 'kg of CO2 to offset (1 to 1,000,000)')
      .option('--amount-cents <n>', 'US cents to spend: buys the most whole kg that fits')
      .option('--amount <dollars>', 'dollars to spend, e.g. 12.50')
      .option('--reference <text>', 'your own label (1 to 200 characters; never public)');

  if (wanted('buy')) purchaseOptions(program.command('buy').description('buy offsets, charged to the balance'))
    .option('--idempotency-key <key>', 'make retries safe: the same key never buys twice (generated when absent)')
    .option('--wait', 'wait until the offset is placed or refunded')
    .option('--max-cents <n>', 'refuse, before buying, a purchase that would cost more than this')
    .option('-y, --yes', 'do not ask to confirm a live purchase')
    .option('--dry-run', 'make every check a purchase would (price, balance, --max-cents, permission) and exit as it would; buy nothing')
    .option('-q, --quiet', 'print only the offset ids, one a line (for xargs and loops)')
    .option('--from-csv <file>', 'one purchase per row of a CSV file (- for stdin): columns kg, amount (dollars) or amount_cents, and reference')
    .option('--batch-id <id>', 'with --from-csv: the batch\'s name in its idempotency keys (default: a hash of the file)')
    .addHelpText('after', examples('carbon buy --kg 500', 'carbon buy --amount 25 --reference flight-LHR-JFK --wait', 'carbon buy --kg 500 --live --yes --max-cents 2500', 'carbon buy --kg 500 --dry-run && carbon buy --kg 500', 'carbon buy --from-csv flights.csv --max-cents 50000 > results.csv', 'carbon buy --from-csv - --json < flights.csv | jq -c \'select(.status == "failed")\''))
    .action(action(() => import('./commands/buy.js')));

  if (wanted('quote')) purchaseOptions(program.command('quote').description('what a purchase would buy and cost; buys nothing'))
    .addHelpText('after', examples('carbon quote --kg 500', 'carbon quote --amount-cents 1250 --json | jq .kg'))
    .action(action(() => import('./commands/quote.js')));

  if (wanted('list')) program
    .command('list')
    .description('list offsets, newest first')
    .option('--limit <n>', 'how many offsets to print, across pages (default 10)')
    .option('--page-size <n>', 'offsets per request (1 to 100; default: what --limit needs, 100 with --all)')
    .option('--starting-after <id>', 'the page after this offset')
    .option('--reference <text>', 'only offsets with this reference')
    .option('--all', 'every offset, page by page, streamed (NDJSON with --json)')
    .addOption(new Option('--status <status>', 'only offsets in this state').choices(['processing', 'placed', 'refunded']))
    .option('--since <when>', 'only offsets created since: a day (2026-01-31) or an age (7d, 12h, 30m)')
    .option('--until <when>', 'only offsets created until: a day (included) or an age')
    .option('-q, --quiet', 'print only the offset ids, one a line (for xargs and loops)')
    .addOption(new Option('--format <format>', 'output format').choices(['table', 'plain', 'json', 'csv']))
    .addHelpText('after', examples('carbon list', 'carbon list --json | jq \'.data[].id\'', 'carbon list --limit 250 --status placed --since 30d', 'carbon list --all --format csv > offsets.csv', 'carbon list --all --json | jq -s \'map(.kg) | add\'', 'carbon list --all -q | xargs -n1 carbon show --json'))
    .action(action(() => import('./commands/list.js')));

  if (wanted('show')) program
    .command('show')
    .description('show one offset')
    .argument('<id>', 'the offset id (off_…)')
    .option('--wait', 'wait until it is placed or refunded')
    .option('-q, --quiet', 'print only the offset ids, one a line (for xargs and loops)')
    .addHelpText('after', examples('carbon show off_3x8…', 'carbon show off_3x8… --wait --timeout 300'))
    .action(action(() => import('./commands/show.js')));

  if (wanted('balance')) program
    .command('balance')
    .description('the prepaid balance of the key\'s mode')
    .addHelpText('after', examples('carbon balance', 'carbon balance --json | jq .available_cents'))
    .action(action(() => import('./commands/balance.js')));

  if (wanted('impact')) program
    .command('impact')
    .description('kg offset through the API, for the key\'s mode')
    .addHelpText('after', examples('carbon impact', 'carbon impact --live --json'))
    .action(action(() => import('./commands/impact.js')));

  if (wanted('report')) program
    .command('report')
    .description('kg and dollars per month, week, quarter or reference, over a span: for a sustainability report')
    .addOption(new Option('--by <what>', 'group by').choices(['month', 'week', 'quarter', 'reference']).default('month'))
    .option('--prefix-sep <sep>', 'with --by reference: group references by the part before this separator')
    .option('--since <day>', 'from this day on (YYYY-MM-DD, UTC)')
    .option('--until <day>', 'up to and including this day (YYYY-MM-DD, UTC)')
    .addOption(new Option('--format <format>', 'output format (html: one printable page, with a chart)').choices(['table', 'plain', 'csv', 'md', 'json', 'html']))
    .addHelpText(
      'after',
      examples('carbon report', 'carbon report --by quarter --since 2026-01-01 --format md', 'carbon report --format html > report.html', 'carbon report --by reference --prefix-sep - --format csv > by-team.csv', 'carbon report --live --json | jq .total.kg'),
    )
    .action(action(() => import('./commands/report.js')));

  if (wanted('watch')) program
    .command('watch')
    .description('follow offsets as they change: an NDJSON event per change (offset.created, offset.placed, offset.refunded)')
    .option('--reference <text>', 'only offsets with this reference')
    .addOption(new Option('--status <status>', 'only the events that leave an offset in this state').choices(['processing', 'placed', 'refunded']))
    .option('--since <when>', 'also replay the offsets created since: a day (2026-01-31) or an age (7d, 12h, 30m)')
    .option('--interval <duration>', 'how often to read the list (default 2s; 10ms to 1h)')
    .option('--forward-to <url>', 'POST each event to this URL, signed (header Carbon-Signature: t=…,v1=HMAC-SHA256)')
    .option('--print-secret', 'print the profile\'s signing secret (made if there is none) and exit')
    .option('--until-settled', 'exit once every offset followed is placed (0) or some refunded (9); 8 after --timeout (default 120 s)')
    .option('--cursor <file>', 'keep where this run is in FILE, and start from it next time')
    .addHelpText('after', `
Without --since, offsets that exist when it starts are not news: their later changes are.
Ctrl-C (or SIGTERM) stops it after saving the cursor (exit 130).
${examples('carbon watch', 'carbon watch --forward-to http://localhost:3000/webhooks', 'carbon buy --from-csv flights.csv && carbon watch --until-settled --timeout 300', 'carbon watch --status refunded --cursor ~/.carbon-watch.cursor | jq -r .data.object.id')}`)
    .action(action(() => import('./commands/watch.js')));

  if (wanted('open')) program
    .command('open')
    .description('the offset\'s certificate: in the browser, or its address with --print (no display: printed)')
    .argument('<id>', 'a placed live offset (off_…)')
    .option('--print', 'print the certificate\'s address (a file on the local engine) instead of opening it')
    .addHelpText('after', examples('carbon open off_3x8…', 'carbon open off_3x8… --print'))
    .action(action(() => import('./commands/open.js')));

  if (wanted('api')) program
    .command('api')
    .description('one raw API request through the configured engine and key; the answer as JSON, its status as the exit code')
    .argument('<method>', 'GET or POST')
    .argument('<path>', 'under /api/v1, e.g. /balance or \'/offsets?limit=2\'')
    .option('-d, --data <json>', 'the JSON body, or @FILE (@- for stdin)')
    .option('--idempotency-key <key>', 'for POST /offsets (generated when absent)')
    .addHelpText('after', examples('carbon api GET /balance', 'carbon api GET \'/offsets?limit=2\' | jq \'.data[].id\'', 'carbon api POST /quotes -d \'{"kg": 500}\'', 'carbon api POST /offsets -d @purchase.json'))
    .action(action(() => import('./commands/api.js')));

  if (wanted('config')) registerConfig(program);
  if (wanted('sandbox')) registerSandbox(program);

  if (wanted('serve')) program
    .command('serve')
    .description('serve the local model as the HTTP API (a stateful sandbox on a port), with its developer page')
    .option('--host <host>', 'interface to listen on', '127.0.0.1')
    .option('--port <port>', 'port; 0 picks a free one', '4010')
    .option('--public-url <url>', 'origin used in certificate URLs (default http://HOST:PORT)')
    .option('--show-keys', 'print the sandbox\'s keys in full (masked otherwise)')
    .addHelpText('after', `
The developer page (top-ups, keys, review, the ledger and a chart of kg bought, in a browser) is
served on the same port: open the developer page address the banner prints; it signs you in once.

On start: a banner on stderr, and one JSON line on stdout for scripts:
  {"url":"http://127.0.0.1:4010/api/v1","test_key":"ck_test_…abcd",…,"developer_page_url":"http://127.0.0.1:4010/login?token=…","pid":1234}
Stops gracefully on Ctrl-C (SIGINT) or SIGTERM, finishing requests in flight, and exits 0.
${examples('carbon serve', 'carbon serve --port 0 --show-keys | head -1 | jq -r .url', 'CARBON_BASE_URL=http://127.0.0.1:4010/api/v1 CARBON_API_KEY=ck_test_… carbon buy --kg 500')}`)
    .action(action(() => import('./commands/serve.js')));

  // ── Shell completion: commands/completion.ts prints completions/*, commands/complete.ts answers the scripts.
  // Neither needs settings or an engine up front, so a broken config never breaks them.
  if (wanted('completion')) program
    .command('completion')
    .description('print the completion script for bash, zsh or fish (or --install it)')
    .argument('[shell]', 'bash, zsh or fish (default with --install: the one $SHELL names)')
    .option('--install', 'write the script where that shell looks for it, and say where')
    .addHelpText(
      'after',
      `${examples(
        'carbon completion bash > ~/.local/share/bash-completion/completions/carbon',
        'carbon completion zsh > "${fpath[1]}/_carbon"   # any directory on $fpath, before compinit',
        'carbon completion fish > ~/.config/fish/completions/carbon.fish',
        'source <(carbon completion bash)                # or zsh, for this shell only',
        'carbon completion --install                     # for the shell $SHELL names',
      )}
Completes commands, options, option values (--format, --profile names, ...) and, for
\`carbon show\`, the newest offset ids. Open a new shell after installing.
`,
    )
    .action(async (shell: string | undefined, flags: { install?: boolean }) => (await import('./commands/completion.js')).run(shell, flags));
  if (wanted('__complete')) program
    .command('__complete', { hidden: true })
    .description('used by the completion scripts: the candidates for the word being completed')
    .helpOption(false)
    .allowUnknownOption()
    .allowExcessArguments()
    .action(async (_options: unknown, command: Command) => (await import('./commands/complete.js')).run(command));
  // ── end of shell completion

  return program;
}

/** carbon config: profiles in config.json. Settings resolve leniently here (see SettingsKind). */
function registerConfig(program: Command): void {
  const configModule = () => import('./commands/config.js');
  const config = program
    .command('config')
    .description('profiles: keys, mode and base URL (in $CARBON_HOME/config.json, readable by you only)')
    .addHelpText('after', `
Keys: test-key, live-key, mode (test|live), base-url. Every subcommand acts on the profile named by
--profile or CARBON_PROFILE, else the current one ("default" unless \`carbon config use\` chose another).
${examples('carbon config set test-key ck_test_…', 'carbon config set --profile staging base-url https://api.example.com/api/v1', 'carbon config use staging', 'carbon config list')}`);
  config
    .command('set')
    .description('set a key of the profile (a value of - reads it from stdin)')
    .argument('<key>', 'test-key, live-key, mode or base-url')
    .argument('<value>', 'the value; - reads it from stdin')
    .addHelpText('after', examples('carbon config set test-key ck_test_…', 'carbon config set mode live', 'pass show carbon/live | carbon config set live-key -'))
    .action(action(pick(configModule, 'set'), 'config'));
  config
    .command('get')
    .description('print one key of the profile (API keys masked unless --reveal); exit 5 when unset')
    .argument('<key>', 'test-key, live-key, mode or base-url')
    .option('--reveal', 'print an API key in full')
    .addHelpText('after', examples('carbon config get base-url', 'carbon config get mode --json | jq -r .value'))
    .action(action(pick(configModule, 'get'), 'config'));
  config
    .command('unset')
    .description('remove a key from the profile')
    .argument('<key>', 'test-key, live-key, mode or base-url')
    .addHelpText('after', examples('carbon config unset base-url', 'carbon config unset live-key --profile staging'))
    .action(action(pick(configModule, 'unset'), 'config'));
  config
    .command('list')
    .description('every profile, API keys masked')
    .addHelpText('after', examples('carbon config list', 'carbon config list --json | jq .profiles'))
    .action(action(pick(configModule, 'list'), 'config'));
  config
    .command('use')
    .description('make a profile the current one')
    .argument('<profile>', 'the profile\'s name')
    .addHelpText('after', examples('carbon config use staging', 'carbon config use default'))
    .action(action(pick(configModule, 'use'), 'config'));
}

/** carbon sandbox: the local model's developer page and back office. Refused on the remote engine. */
function registerSandbox(program: Command): void {
  const sandboxModule = () => import('./commands/sandbox.js');
  const sandbox = program
    .command('sandbox')
    .description('drive the local model: top-ups, keys, account, review, failures, clock, reset')
    .addHelpText('after', `
These act on this machine's model (the one \`carbon serve\` serves from the same CARBON_HOME), never
on a remote API; with a base URL configured, add --local.
${examples('carbon sandbox status', 'carbon sandbox topup 250 --live', 'carbon sandbox clock advance 2m', 'carbon sandbox keys --reveal --json | jq -r \'.[] | select(.default=="test") | .secret\'')}`);
  sandbox
    .command('status')
    .description('account, rate, limits, clock, balances and impact')
    .addHelpText('after', examples('carbon sandbox status', 'carbon sandbox status --json | jq .balances'))
    .action(action(pick(sandboxModule, 'status')));
  sandbox
    .command('topup')
    .description('add to the balance of the mode (--live or --test); the smallest top-up is $250')
    .argument('[dollars]', 'dollars, such as 250 or 250.00')
    .option('--cents <n>', 'the amount in cents instead')
    .addHelpText('after', examples('carbon sandbox topup 250', 'carbon sandbox topup 1000 --live', 'carbon sandbox topup --cents 25000 --json | jq .available_cents'))
    .action(action(pick(sandboxModule, 'topup')));
  const keys = sandbox
    .command('keys')
    .description('API keys: list (masked unless --reveal), create, revoke')
    .addHelpText('after', examples('carbon sandbox keys', 'carbon sandbox keys create --live', 'carbon sandbox keys revoke key_…'));
  keys
    .command('list', { isDefault: true })
    .description('every key, masked unless --reveal')
    .option('--reveal', 'print the keys in full')
    .addHelpText('after', examples('carbon sandbox keys', 'carbon sandbox keys --reveal --json | jq -r \'.[] | select(.default=="test") | .secret\''))
    .action(action(pick(sandboxModule, 'keysList')));
  keys
    .command('create')
    .description('create a key of the mode (--live or --test) and print it in full, once')
    .option('--read-only', 'reads only: purchases get 403 insufficient_permissions')
    .addHelpText('after', examples('carbon sandbox keys create', 'KEY=$(carbon sandbox keys create --live)', 'carbon sandbox keys create --read-only --json | jq -r .secret'))
    .action(action(pick(sandboxModule, 'keysCreate')));
  keys
    .command('revoke')
    .description('revoke a key: it gets 401 from now on')
    .argument('<id>', 'the key\'s id (key_…), from `carbon sandbox keys`')
    .addHelpText('after', examples('carbon sandbox keys revoke key_…'))
    .action(action(pick(sandboxModule, 'keysRevoke')));
  sandbox
    .command('account')
    .description('set the account\'s standing: suspended or unapproved accounts get 403 api_access_inactive')
    .addArgument(new Argument('<status>', 'the new standing').choices(['active', 'suspended', 'unapproved']))
    .addHelpText('after', examples('carbon sandbox account suspended', 'carbon sandbox account active'))
    .action(action(pick(sandboxModule, 'accountStatus')));
  sandbox
    .command('rate')
    .description('set the rate, in thousandths of a cent per kg (4000 = $0.04/kg)')
    .argument('<millicents>', 'millicents per kg')
    .addHelpText('after', examples('carbon sandbox rate 4000', 'carbon sandbox rate 4125 --json'))
    .action(action(pick(sandboxModule, 'rate')));
  sandbox
    .command('review-limit')
    .description('set the automatic review limit: larger live purchases wait for review')
    .argument('<dollars>', 'dollars, such as 5000; 0 reviews every live purchase')
    .addHelpText('after', examples('carbon sandbox review-limit 5000', 'carbon sandbox review-limit 0'))
    .action(action(pick(sandboxModule, 'reviewLimit')));
  sandbox
    .command('rate-limit')
    .description('allow N requests per window per key (429 rate_limited beyond), or off')
    .argument('<n|off>', 'requests per window, or off')
    .option('--window <duration>', 'the window, such as 1s or 1m (default: unchanged, 1s at first)')
    .addHelpText('after', examples('carbon sandbox rate-limit 5 --window 1s', 'carbon sandbox rate-limit 0', 'carbon sandbox rate-limit off'))
    .action(action(pick(sandboxModule, 'rateLimit')));
  sandbox
    .command('review')
    .description('approve (placed now) or reject (refunded) a live offset waiting for review')
    .addArgument(new Argument('<decision>', 'approve or reject').choices(['approve', 'reject']))
    .argument('<id>', 'the offset id (off_…)')
    .addHelpText('after', examples('carbon sandbox review approve off_…', 'carbon sandbox review reject off_… --json | jq .status'))
    .action(action(pick(sandboxModule, 'review')));
  sandbox
    .command('fail')
    .description('the order could not be placed: a processing offset is refunded')
    .argument('<id>', 'the offset id (off_…)')
    .addHelpText('after', examples('carbon sandbox fail off_…'))
    .action(action(pick(sandboxModule, 'fail')));
  const clock = sandbox
    .command('clock')
    .description('the model\'s clock: show it, or move it forward to fire placements')
    .addHelpText('after', examples('carbon sandbox clock', 'carbon sandbox clock advance 2m'));
  clock
    .command('show', { isDefault: true })
    .description('the model\'s time, and how far ahead of real time it is')
    .addHelpText('after', examples('carbon sandbox clock', 'carbon sandbox clock --json | jq -r .now'))
    .action(action(pick(sandboxModule, 'clockShow')));
  clock
    .command('advance')
    .description('move the clock forward (test offsets place after 3 s, live after 60 s)')
    .argument('<duration>', 'such as 90s, 15m, 2h, 1d or 1h30m')
    .addHelpText('after', examples('carbon sandbox clock advance 90s', 'carbon sandbox clock advance 1d --json'))
    .action(action(pick(sandboxModule, 'clockAdvance')));
  sandbox
    .command('login')
    .description('a fresh one-time link to the developer page of carbon serve (opened, or printed)')
    .option('--print', 'print the link alone on stdout instead of opening it')
    .option('--url <url>', 'the page\'s address (default: what the last carbon serve on this ledger recorded)')
    .addHelpText('after', examples('carbon sandbox login', 'carbon sandbox login --print', 'carbon sandbox login --print --url https://sandbox.example.com'))
    .action(action(pick(sandboxModule, 'login')));
  const faults = sandbox
    .command('faults')
    .description('inject faults into API requests: 429/500/503, dropped connections, latency')
    .addHelpText('after', `
The setting lives in the ledger: every \`carbon serve\` on it, and the local engine, apply it from
the next request. A seed makes the draws repeatable.
${examples('carbon sandbox faults set --error-rate 0.3 --seed 7', 'carbon sandbox faults set --latency 50ms-400ms --route "POST /offsets"', 'carbon sandbox faults off')}`);
  faults
    .command('show', { isDefault: true })
    .description('the faults injected now (off by default)')
    .addHelpText('after', examples('carbon sandbox faults', 'carbon sandbox faults --json | jq .error_rate'))
    .action(action(pick(sandboxModule, 'faultsShow')));
  faults
    .command('set')
    .description('replace the fault setting')
    .option('--error-rate <share>', 'share of requests (0 to 1) answered with a fault, such as 0.3')
    .option('--errors <list>', 'the faults drawn from: 429,500,503,drop-before,drop-after (default: all)')
    .option('--latency <range>', 'added latency, such as 200ms or 50ms-400ms')
    .option('--route <route>', 'only this endpoint, such as "POST /offsets" (default: every one)')
    .option('--mode <mode>', 'only requests with a test or a live key (default: both)')
    .option('--seed <n>', 'seed of the draws, for a repeatable run (default: random)')
    .option('--retry-after <seconds>', 'Retry-After of injected 429s and 503s (default 1)')
    .addHelpText('after', examples('carbon sandbox faults set --error-rate 0.3 --seed 7', 'carbon sandbox faults set --errors drop-after --error-rate 0.5 --route "POST /offsets"', 'carbon sandbox faults set --latency 50ms-400ms --mode live'))
    .action(action(pick(sandboxModule, 'faultsSet')));
  faults
    .command('off')
    .description('stop injecting faults')
    .addHelpText('after', examples('carbon sandbox faults off'))
    .action(action(pick(sandboxModule, 'faultsOff')));
  sandbox
    .command('reset')
    .description('delete every offset, balance and key and start over (asks first on a terminal)')
    .option('-y, --yes', 'do not ask (required when there is no terminal)')
    .addHelpText('after', examples('carbon sandbox reset', 'carbon sandbox reset --yes --json | jq .balances'))
    .action(action(pick(sandboxModule, 'reset')));
}
