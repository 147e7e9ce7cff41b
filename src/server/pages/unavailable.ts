import { escapeHtml, htmlDocument } from './html.js';

/**
 * The pages a browser gets when a request could not be answered as asked, never the API's JSON:
 * what happened in words, that nothing was changed, and what to do. They have their own inline
 * style only (no asset to fetch from a server that is struggling).
 */
function problemPage(
  title: `carbon sandbox: ${string}`,
  heading: string,
  message: string,
  next: string,
  requestId: string,
  note?: string,
): string {
  const style = `<style>
body { margin: 0; font: 16px/1.5 system-ui, sans-serif; color: #17221b; background: #f6f7f3; }
.sandbox-band { margin: 0; padding: 0.45rem 1.5rem; background: #fff3c4; color: #4a3700; border-bottom: 2px solid #b58900; }
main { max-width: 36rem; margin: 0 auto; padding: 3rem 1.25rem; }
code { font-family: ui-monospace, monospace; }
</style>`;
  return htmlDocument(
    title,
    style,
    `<div role="region" aria-label="Sandbox"><p class="sandbox-band" role="note"><strong>Sandbox</strong> — for testing only: nothing here is real.</p></div>
<main>
<h1>${escapeHtml(heading)}</h1>
${note === undefined ? '' : `<p role="alert"><strong>${escapeHtml(note)}</strong></p>\n`}<p>${escapeHtml(message)}</p>
<p>${note === undefined ? 'Nothing was changed by this request.' : 'Showing this page changed nothing.'} ${next} (request <code>${escapeHtml(requestId)}</code>).</p>
</main>`,
  );
}

/** The ledger cannot be reached (503, with the API's Retry-After when it is `passing`): reload shortly, or read the server's log. */
export function unavailablePage(message: string, requestId: string, passing = true, note?: string): string {
  return passing
    ? problemPage(
        'carbon sandbox: unavailable',
        'Unavailable for a moment',
        message,
        "Reload the page in a few seconds; if it goes on, the server's log says why",
        requestId,
        note,
      )
    : problemPage('carbon sandbox: unavailable', 'Unavailable', message, "The server's log says why, and what to do", requestId, note);
}

/** A page's request `carbon serve` refused before reading it (a form's fields over the body limit: 413): go back and send less. */
export function refusedPage(message: string, requestId: string, tooLarge: boolean): string {
  const next = tooLarge ? 'Go back, and send the form again with less typed in its fields' : 'Go back, and send it again';
  return problemPage('carbon sandbox: not sent', 'Not sent', message, next, requestId);
}
