import type { ApiRequest, ApiResponse } from '../api/types.js';

/** Carries one API request to the service and brings back its response. */
export interface Transport {
  request(request: ApiRequest): Promise<ApiResponse>;
  /** The URL a request goes to, as sent (for --verbose); none for the in-process model. */
  url?(request: ApiRequest): string;
  /** Releases what the transport holds (a database handle, sockets). */
  close?(): void;
}

/** Anything that answers an ApiRequest: the in-process service model. */
export interface RequestHandler {
  handle(request: ApiRequest): Promise<ApiResponse>;
}

/** The local engine: calls the service model in this process. Same requests, same answers. */
export class LocalTransport implements Transport {
  constructor(
    private readonly handler: RequestHandler,
    private readonly onClose: () => unknown = () => {},
  ) {}

  request(request: ApiRequest): Promise<ApiResponse> {
    return this.handler.handle(request);
  }

  close(): void {
    this.onClose();
  }
}
