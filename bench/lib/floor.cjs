'use strict';
// The least any program answering `carbon balance --json` from carbon's ledger must do, for the
// start-up benchmarks' floor (bench/run.mjs, bench/compare-startup.mjs): load node:sqlite (Node
// 22's ExperimentalWarning silenced, as carbon silences it), open the ledger a person's carbon
// keeps in ~/.local/share/carbon (made by carbon first), read the test balance's row, write it
// as JSON. What the runtime itself costs such a command; carbon's own code is the rest.
const emit = process.emitWarning;
process.emitWarning = (w, ...rest) => (/^SQLite is an experimental/.test(String(w)) ? undefined : emit.call(process, w, ...rest));
const { DatabaseSync } = require('node:sqlite');
process.emitWarning = emit;
const db = new DatabaseSync(`${process.env.HOME}/.local/share/carbon/ledger.db`);
const { available_cents } = db.prepare('SELECT available_cents FROM balances WHERE livemode = 0').get();
require('node:fs').writeSync(1, `${JSON.stringify({ object: 'balance', livemode: false, available_cents, currency: 'usd' }, null, 2)}\n`);
db.close();
