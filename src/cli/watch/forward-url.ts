import { usage } from '../errors.js';

/** `--forward-to`'s URL, checked before anything is read: http(s), and no user name or password. */
export function forwardUrl(given: string): URL {
  let url: URL | undefined;
  try {
    url = new URL(given);
  } catch {
    url = undefined;
  }
  // What was typed is echoed only when it cannot hold a user name or password (nothing before an @).
  const typed = given.includes('@') ? `what was given (${given.length} characters)` : `"${given}"`;
  if (url === undefined || !/^https?:$/.test(url.protocol))
    throw usage(`--forward-to must be an http(s) URL such as http://localhost:3000/webhooks, not ${typed}.`);
  // fetch refuses such a URL, so no event could be delivered; and every warning would print it.
  if (url.username !== '' || url.password !== '')
    throw usage(
      '--forward-to must not carry a user name or password (user:password@): they would show in every line that names the URL.',
      'The receiver checks the Carbon-Signature header instead.',
    );
  return url;
}
