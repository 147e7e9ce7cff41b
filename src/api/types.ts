/**
 * The API's wire shapes (spec parts 2, 4 and 7). Shared by the service model and the client;
 * this module holds types and constants only, so importing it costs nothing at run time.
 */

/** An HTTP request as the API sees it: the raw body, exactly as HTTP delivers it. */
export interface ApiRequest {
  method: string;
  /** Path including the `/api/v1` version segment, without the query string. */
  path: string;
  /** Query parameters; a parameter given more than once is an array. */
  query: Record<string, string | string[] | undefined>;
  /** Header names in lower case. */
  headers: Record<string, string | undefined>;
  /** Raw body; the empty string when there is none. */
  body: string;
  /** The query as it came over HTTP (`carbon serve`), before it was read: the journal keeps it as sent. */
  rawQuery?: string;
}

/** An HTTP response as the API gives it: the spec's JSON, not yet serialised. */
export interface ApiResponse<T = unknown> {
  status: number;
  headers: Record<string, string>;
  body: T;
}

/** Where an offset is in its life; `carbon list --status` and `carbon watch --status` offer them. */
export const OFFSET_STATUSES = ['processing', 'placed', 'refunded'] as const;
export type OffsetStatus = (typeof OFFSET_STATUSES)[number];
/** A key's mode: each has a balance and offsets of its own. */
export const MODES = ['test', 'live'] as const;
export type Mode = (typeof MODES)[number];
/** An account's standing: only an active account may use the API (others get 403 api_access_inactive). */
export const ACCOUNT_STANDINGS = ['active', 'suspended', 'unapproved'] as const;
export type AccountStanding = (typeof ACCOUNT_STANDINGS)[number];

export interface Offset {
  object: 'offset';
  id: string;
  livemode: boolean;
  status: OffsetStatus;
  kg: number;
  amount_cents: number;
  currency: string;
  rate_millicents_per_kg: number;
  requested: { kg: number | null; amount_cents: number | null };
  reference: string | null;
  certificate_url: string | null;
  created: string;
  placed: string | null;
}

export interface Quote {
  object: 'quote';
  livemode: boolean;
  kg: number;
  amount_cents: number;
  currency: string;
  rate_millicents_per_kg: number;
  available_cents: number;
  sufficient_balance: boolean;
  requires_review: boolean;
}

export interface Balance {
  object: 'balance';
  livemode: boolean;
  available_cents: number;
  currency: string;
  rate_millicents_per_kg: number;
}

export interface Impact {
  object: 'impact';
  livemode: boolean;
  placed_kg: number;
  processing_kg: number;
  offsets: number;
}

export interface OffsetList {
  object: 'list';
  data: Offset[];
  has_more: boolean;
}

/** The body of a purchase or a quote: exactly one of `kg` or `amount_cents`. */
export interface PurchaseParams {
  kg?: number;
  amount_cents?: number;
  reference?: string;
}

export interface ListParams {
  limit?: number;
  starting_after?: string;
  reference?: string;
}

export type ErrorType = 'authentication_error' | 'permission_error' | 'invalid_request_error' | 'rate_limit_error' | 'api_error';

/** The error envelope's inner object (spec part 7). */
export interface ApiErrorBody {
  type: ErrorType;
  code: string;
  message: string;
  param?: string;
  balance_cents?: number;
  required_cents?: number;
}

export interface ErrorEnvelope {
  error: ApiErrorBody;
}

/** The version segment every path starts with. */
export const API_PREFIX = '/api/v1';

/** Spec part 8. */
export const LIMITS = {
  kgMin: 1,
  kgMax: 1_000_000,
  amountCentsMin: 1,
  amountCentsMax: 5_000_000,
  referenceMax: 200,
  idempotencyKeyMax: 255,
  listLimitMin: 1,
  listLimitMax: 100,
  listLimitDefault: 10,
  topUpMinCents: 25_000,
  /** The account's rate, millicents per kg (the sandbox's bound, not the spec's): kg × rate stays below 2^53. */
  rateMax: 10_000_000,
} as const;
