import type { ApiRequest, ApiResponse } from '../api/types.js';
import { FaultDice, faultResponse, sleep } from '../service/faults.js';
import { CarbonConnectionError } from './errors.js';
import type { RequestHandler } from './transport.js';

/**
 * `carbon sandbox faults` on the local engine, so a script can rehearse them without a server:
 * the same draws as `carbon serve` makes (the setting read at each request: the store keeps it),
 * latency slept, 429/500/503 answered in the envelope, and a dropped connection raised as the
 * network failure HttpTransport would raise (after the service acted, for `drop-after`). Each
 * process draws its own sequence: with a seed, a command's run is the same every time.
 * `faultsText` reads the stored setting (`Sandbox.faultsText`).
 */
export function withFaults(handler: RequestHandler, faultsText: () => Promise<string | undefined>): RequestHandler {
  const dice = new FaultDice();
  const dropped = () =>
    new CarbonConnectionError('Could not reach the local sandbox: the connection was dropped (a fault injected by carbon sandbox faults).');
  return {
    async handle(request: ApiRequest): Promise<ApiResponse> {
      const config = dice.use(await faultsText());
      const fault = config === null ? null : dice.draw(request);
      if (fault === null) return handler.handle(request);
      if (fault.latencyMs > 0) await sleep(fault.latencyMs);
      switch (fault.kind) {
        case null:
          return handler.handle(request);
        case 'drop-before':
          throw dropped();
        case 'drop-after':
          await handler.handle(request);
          throw dropped();
        default:
          return faultResponse(fault.kind, config!);
      }
    },
  };
}
