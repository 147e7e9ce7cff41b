/**
 * Stands in for `carbon serve --port 0` while the binary does not have it: serves
 * CARBON_DATA_DIR on a free loopback port, prints one JSON line with "url" on stdout and the
 * access log on stderr, closes gracefully on SIGINT/SIGTERM. Bundled by support.ts with esbuild.
 */
import { closeOnSignals, startServer } from '../../src/server/server.js';

const dataDir = process.env.CARBON_DATA_DIR;
if (!dataDir) throw new Error('CARBON_DATA_DIR is not set');
const log = (line: string) => process.stderr.write(`${line}\n`);
const server = await startServer({ host: '127.0.0.1', port: 0, dataDir, log });
closeOnSignals(server, { log });
process.stdout.write(`${JSON.stringify({ url: server.url })}\n`);
