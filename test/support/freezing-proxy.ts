import { createServer, type Server, Socket } from 'node:net';

/**
 * A TCP proxy in front of PostgreSQL that can stop passing anything on, as a partition or a stopped
 * server does, and go on again as a server continued (SIGCONT) does: what was sent meanwhile, on a
 * connection or to open one, is delivered then, not lost. On `port` if given: a proxy closed (the
 * database gone) comes back where the server looks for it.
 */
export async function freezingProxy(
  target: URL,
  port = 0,
): Promise<{ url: string; freeze(): void; thaw(): void; close(): Promise<void>; accepted(): number }> {
  let frozen = false;
  let accepted = 0;
  const held: Array<() => void> = [];
  const sockets = new Set<Socket>();
  /** The sockets joined to their other end: only these are paused and resumed (a socket resumed with no reader drops what it reads). */
  const piped = new Set<Socket>();
  const server: Server = createServer((inbound) => {
    accepted++;
    sockets.add(inbound);
    inbound.on('error', () => {});
    inbound.on('close', () => {
      sockets.delete(inbound);
      piped.delete(inbound);
    });
    const join = () => {
      const outbound = new Socket();
      sockets.add(outbound);
      outbound.on('error', () => inbound.destroy());
      outbound.on('close', () => {
        sockets.delete(outbound);
        piped.delete(outbound);
        inbound.destroy();
      });
      inbound.on('close', () => outbound.destroy());
      outbound.connect(Number(target.port || 5432), target.hostname, () => {
        inbound.pipe(outbound);
        outbound.pipe(inbound);
        piped.add(inbound).add(outbound);
        if (frozen) {
          inbound.pause();
          outbound.pause();
        }
      });
    };
    // Accepted, as the kernel accepts for a stopped server, and then nothing.
    if (frozen) held.push(join);
    else join();
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const url = new URL(target);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as { port: number }).port);
  return {
    url: url.toString(),
    freeze: () => {
      frozen = true;
      for (const s of piped) s.pause();
    },
    thaw: () => {
      frozen = false;
      for (const s of piped) s.resume();
      for (const join of held.splice(0)) join();
    },
    /** The connections opened through the proxy so far. */
    accepted: () => accepted,
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
