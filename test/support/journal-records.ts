import type { NewJournalRecord } from '../../src/store/port.js';

/** A journal entry as a store takes it (a GET /balance answered 200); `fields` overrides any column. */
export function journalRecord(fields: Partial<NewJournalRecord> & Pick<NewJournalRecord, 'request_id' | 'model_ms'>): NewJournalRecord {
  return {
    real_ms: fields.model_ms,
    method: 'GET',
    path: '/api/v1/balance',
    query: '',
    status: 200,
    error_type: null,
    error_code: null,
    error_param: null,
    error_message: null,
    duration_us: 100,
    key_id: null,
    mode: null,
    idempotency_key: null,
    replayed: false,
    offset_id: null,
    instance: 'test',
    request_body: '',
    response_body: '{}',
    ...fields,
  };
}
