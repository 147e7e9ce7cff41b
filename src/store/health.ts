/**
 * The health check's answer. Not ok: `reason` says why, for a probe's body (never the ledger's
 * address: a probe is answered to anyone), and `passing` whether it passes by itself (the database
 * not answering, a standby) or a person mends it (the ledger's tables gone, or its rights taken:
 * requests answer 503 without Retry-After then too).
 */
export type Health = { ok: true } | { ok: false; reason: 'no_answer' | 'read_only' | 'ledger_unusable'; passing: boolean };
