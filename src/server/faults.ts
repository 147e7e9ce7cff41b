import type { ServerResponse } from 'node:http';
import type { ApiRequest, ApiResponse } from '../api/types.js';
import { type FaultConfig, FaultDice, faultResponse, noteAnswer, sleep } from '../service/faults.js';
import type { OffsetsService } from '../service/service.js';
import { LoggedResponse } from './access-log.js';

/**
 * `carbon sandbox faults` in the server: each batch of requests reads the setting once (so every
 * instance on a shared ledger follows a change from its next request), and each API request is
 * answered through `withFaults`: delayed, answered 429/500/503 instead of by the service, or its
 * connection cut before the service sees it or after it has acted (the purchase committed, the
 * answer lost: the "outcome unknown" case a client's retries must survive).
 */
export class ServerFaults {
  private readonly dice = new FaultDice();

  /** `read`: the stored setting's text as every instance sees it (`() => sandbox.faultsText()`); the store caches it. */
  constructor(private readonly read: () => Promise<string | undefined>) {}

  /** The setting for the next batch. A new setting starts its seeded sequence again. */
  async load(): Promise<FaultConfig | null> {
    return this.dice.use(await this.read());
  }

  /**
   * Answers `request` through the service unless its drawn fault says otherwise. Resolves to the
   * response to send, or null when the connection was cut (nothing is to be sent).
   */
  async withFaults(
    config: FaultConfig | null,
    request: ApiRequest,
    res: ServerResponse,
    service: OffsetsService,
  ): Promise<ApiResponse | null> {
    const fault = config === null ? null : this.dice.draw(request);
    if (fault === null) return service.handle(request);
    // Started before the latency: the journal's duration is what the caller waited, as the access log's.
    const trace = service.journal.trace();
    const handle = () => service.handle(request, trace);
    if (fault.latencyMs > 0) await sleep(fault.latencyMs);
    // A client that left while the latency held its request (its timeout, a cut) never learns of an answer: nothing is done for it.
    const { socket } = res.req;
    if (res.destroyed || socket.destroyed || socket.writableEnded || socket.readableEnded) return null;
    switch (fault.kind) {
      case null:
        return handle();
      case 'drop-before':
        cut(res, 'drop-before');
        return null;
      case 'drop-after':
        cut(res, 'drop-after', await handle());
        return null;
      default: {
        const response = faultResponse(fault.kind, config!);
        await noteAnswer(service, request, response, trace);
        return response;
      }
    }
  }
}

/**
 * Cuts the connection `res` answers on: at once, or, pipelined behind answers not yet sent, once
 * those are (its turn). Node's destroy() of a response still waiting its turn only closes the
 * response, and the connection stayed open, silent, until the client gave up. The access log says
 * which fault cut it, and after `drop-after` the answer the service made (its status and Request-Id).
 */
function cut(res: ServerResponse, by: LoggedResponse['cutBy'], answered?: ApiResponse): void {
  if (res instanceof LoggedResponse) {
    res.cutBy = by;
    if (answered !== undefined) {
      res.statusCode = answered.status;
      res.requestId = answered.headers['request-id'];
    }
  }
  if (res.socket !== null) res.destroy();
  else res.once('socket', (socket) => socket.destroy());
}
