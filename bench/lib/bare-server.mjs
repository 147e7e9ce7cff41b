// The serving target's reference: a bare node:http server answering a fixed JSON body (the
// shape and size of a balance), with nothing else: no routing, no auth, no ledger (unless SPIN_US). Prints
// {"url": ...} on stdout once listening on loopback; SIGTERM closes it.
import { createServer } from 'node:http';

const body = JSON.stringify({ object: 'balance', livemode: false, available_cents: 100000, currency: 'usd', rate_millicents_per_kg: 4000 });
// SPIN_US: CPU spent on each request before answering (bench/compare-serve.mjs bare:N), a stand-in
// for the work a real server does: how the rate falls as each request costs more.
const spinMs = Number(process.env.SPIN_US ?? 0) / 1000;
const server = createServer((_req, res) => {
  if (spinMs > 0) for (const end = performance.now() + spinMs; performance.now() < end; );
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${server.address().port}` })}\n`);
});
process.on('SIGTERM', () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
