import { requestId } from '../../../service/keys.js';
import type { Reply } from '../../reply.js';

/** The developer page's answers (routes.ts, requests-routes.ts): no inline script or style; forms post only here; nothing may frame the page. */
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; " +
  "frame-ancestors 'none'; base-uri 'none'";
const SECURITY = { 'content-security-policy': CSP, 'referrer-policy': 'same-origin', 'x-frame-options': 'DENY' };

export const html = (status: number, body: string, headers: Record<string, string> = {}): Reply => ({
  status,
  headers: { 'request-id': requestId(), ...SECURITY, ...headers },
  body,
  type: 'text/html; charset=utf-8',
});

/** A form's answer, and a page's way on: 303 to `to` (post/redirect/get: a reload does not post again). */
export const redirect = (to: string, headers: Record<string, string> = {}): Reply => ({
  status: 303,
  headers: { 'request-id': requestId(), ...SECURITY, location: to, ...headers },
  body: '',
  type: 'text/plain',
});
