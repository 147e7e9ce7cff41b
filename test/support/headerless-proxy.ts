import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback proxy to `target` (a `carbon serve`) whose answers lack `Carbon-Sandbox`: a service
 * that does not say it is a sandbox, as the live one does not.
 */
export async function headerless(target: string): Promise<{ url: string; close(): void }> {
  const to = new URL(target);
  const proxy = createServer((req, res) => {
    const out = request({ host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      const { 'carbon-sandbox': _, ...headers } = answer.headers;
      res.writeHead(answer.statusCode ?? 502, headers);
      answer.pipe(res);
    });
    req.pipe(out);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const { port } = proxy.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}${to.pathname}`, close: () => proxy.close() };
}
