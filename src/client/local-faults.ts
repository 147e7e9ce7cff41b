import type { ApiRequest, ApiResponse } from '../api/types.js';
import { FaultDice, faultResponse, noteAnswer, sleep } from '../service/faults.js';
import type { OffsetsService } from '../service/service.js';
import { CarbonConnectionError } from './errors.js';
import type { RequestHandler } from './transport.js';

/**
 * `carbon sandbox faults` on the local engine, so a script can rehearse them without a server:
 * the same draws as `carbon serve` makes (the setting read at each request: the store keeps it),
 * latency slept, 429/500/503 answered in the envelope, and a dropped connection raised as the
 * network failure HttpTransport would raise (after the service acted, for `drop-after`); a 429,
 * 500 or 503 is noted in the journal, as the server notes it. Each
 * process draws its own sequence: with a seed, a command's run is the same every time.
 * `faultsText` reads the stored setting (`Sandbox.faultsText`).
 */
export function withFaults(service: OffsetsService, faultsText: () => Promise<string | undefined>): RequestHandler {
  const dice = new FaultDice();
  const dropped = () =>
    new CarbonConnectionError('Could not reach the local sandbox: the connection was dropped (a fault injected by carbon sandbox faults).');
  return {
    async handle(request: ApiRequest): Promise<ApiResponse> {
      const config = dice.use(await faultsText());
      const fault = config === null ? null : dice.draw(request);
      if (fault === null) return service.handle(request);
      // Started before the latency: the journal's duration is what the caller waited.
      const trace = service.journal.trace();
      if (fault.latencyMs > 0) await sleep(fault.latencyMs);
      switch (fault.kind) {
        case null:
          return service.handle(request, trace);
        case 'drop-before':
          throw dropped();
        case 'drop-after':
          await service.handle(request, trace);
          throw dropped();
        default: {
          const response = faultResponse(fault.kind, config!);
          await noteAnswer(service, request, response, trace);
          return response;
        }
      }
    },
  };
}
