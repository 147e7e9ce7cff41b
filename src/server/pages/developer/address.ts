import type { LedgerStore } from '../../../store/port.js';

/**
 * Where the developer page is served: each `carbon serve` records its public origin (its
 * --public-url, or http://host:port) in the store when it starts, so `carbon sandbox login` on
 * any machine that reaches the ledger can make a link to it. With several instances on one
 * ledger the last one started wins; behind a load balancer, give every instance the same
 * --public-url.
 */

const PAGE_URL = 'developer_page.url';

export async function recordPageUrl(store: LedgerStore, origin: string): Promise<void> {
  await store.transaction((tx) => tx.putMeta(PAGE_URL, origin));
}

export function recordedPageUrl(store: LedgerStore): Promise<string | undefined> {
  return store.meta(PAGE_URL);
}
