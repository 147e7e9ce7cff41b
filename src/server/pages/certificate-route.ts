import type { ServerResponse } from 'node:http';
import type { OffsetsService } from '../../service/service.js';
import { requestId } from '../../service/keys.js';
import { send } from '../http.js';
import { certificateNotFoundPage, certificatePage } from './certificate.js';

export const CERTIFICATE_PATH = /^\/certificates\/([^/?]+)$/;
const CERTIFICATE_ID = /^cert_[0-9a-f]{24}$/;

/** GET /certificates/{id}: the public page of a placed live offset; 404 for anything else. */
export async function certificate(res: ServerResponse, service: OffsetsService, segment: string, closing: boolean): Promise<void> {
  let certId = segment;
  try {
    certId = decodeURIComponent(segment);
  } catch {
    // Not valid percent-encoding: it names no certificate; shown escaped as it came.
  }
  const row = CERTIFICATE_ID.test(certId) ? await service.store.offsetByCertificate(certId) : undefined;
  const offset = row === undefined ? undefined : service.toOffset(row, service.now(await service.account()));
  const headers = {
    'request-id': requestId(),
    // The page is static HTML: no script, no outside resource, only its own inline style.
    'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
    'referrer-policy': 'no-referrer',
  };
  if (offset === undefined || offset.status !== 'placed' || !offset.livemode) {
    send(res, 404, headers, certificateNotFoundPage(certId), 'text/html; charset=utf-8', closing);
    return;
  }
  send(res, 200, headers, certificatePage(offset, certId), 'text/html; charset=utf-8', closing);
}
