/**
 * What the local engine's papers say of themselves (`carbon report` in every format for people:
 * a band, a line, a column; `carbon list`'s CSV and `buy --from-csv`'s results, a column): the
 * purchases were the sandbox's. The certificate page and the developer page say it in their own
 * words (src/server/pages/).
 */
export const SANDBOX_HEADLINE = 'Sandbox: not real purchases.';
/** Beside the mode on a card (balance, impact, quote, an offset), and so under `carbon list`'s table. */
export const SANDBOX_MODE = 'sandbox: not real';
/** A CSV's last column in the sandbox, on every row: a spreadsheet shows it beside each figure. */
export const SANDBOX_CSV_COLUMN = 'environment';
/** That column's value, and what a purchase's ✓ line adds to its mode. */
export const SANDBOX_PURCHASE = 'sandbox: not a real purchase';
export const SANDBOX_DETAIL =
  "No carbon credits were bought or retired, and no money was paid: these offsets were bought in carbon's sandbox, a stand-in for the carbon offsets service used for testing.";
