import { escapeHtml, htmlDocument } from './html.js';

/**
 * The page a browser gets when the ledger cannot be reached (503, with the API's Retry-After when
 * it is `passing`): what happened in words, that nothing was lost, and what to do (reload shortly,
 * or read the server's log); never the API's JSON. It has its own inline style only (no asset to
 * fetch from a server that is struggling).
 */
export function unavailablePage(message: string, requestId: string, passing = true): string {
  const style = `<style>
body { margin: 0; font: 16px/1.5 system-ui, sans-serif; color: #17221b; background: #f6f7f3; }
.sandbox-band { margin: 0; padding: 0.45rem 1.5rem; background: #fff3c4; color: #4a3700; border-bottom: 2px solid #b58900; }
main { max-width: 36rem; margin: 0 auto; padding: 3rem 1.25rem; }
code { font-family: ui-monospace, monospace; }
</style>`;
  return htmlDocument(
    'carbon sandbox: unavailable',
    style,
    `<div role="region" aria-label="Sandbox"><p class="sandbox-band" role="note"><strong>Sandbox</strong> — for testing only: nothing here is real.</p></div>
<main>
<h1>${passing ? 'Unavailable for a moment' : 'Unavailable'}</h1>
<p>${escapeHtml(message)}</p>
<p>Nothing was changed by this request. ${passing ? "Reload the page in a few seconds; if it goes on, the server's log says why" : "The server's log says why, and what to do"} (request <code>${escapeHtml(requestId)}</code>).</p>
</main>`,
  );
}
