// The log of ARM requests the emulator answered, for tests that assert on what a client sent
// (how often it polled, whether it honoured Retry-After, what it PUT).

import type { RequestKind } from './throttling.js';

export interface RequestLogEntry {
  seq: number;
  time: string;
  method: string;
  /** Path and query string as received. */
  url: string;
  kind: RequestKind | undefined;
  vmName: string | undefined;
  status: number;
  errorCode: string | undefined;
  throttled: boolean;
  /**
   * A hang fault withheld the answer (sent late or never). `status` is what the request produced, or 0
   * when it was not processed at all.
   */
  hung: boolean;
  /** The parsed JSON body of the requests that carry one: VM PUTs and placement score POSTs. */
  body: unknown;
}

export interface RequestFilter {
  method?: string;
  kind?: RequestKind;
  vmName?: string;
  status?: number;
  /** Only entries with seq greater than this. */
  afterSeq?: number;
}

const maxEntries = 20_000;

export class RequestLog {
  private entries: RequestLogEntry[] = [];
  private seq = 0;

  record(entry: Omit<RequestLogEntry, 'seq' | 'time'>): void {
    this.seq += 1;
    this.entries.push({ ...entry, seq: this.seq, time: new Date().toISOString() });
    if (this.entries.length > maxEntries) this.entries = this.entries.slice(-maxEntries / 2);
  }

  query(filter: RequestFilter = {}): RequestLogEntry[] {
    return this.entries.filter(
      (e) =>
        (filter.method === undefined || e.method.toUpperCase() === filter.method.toUpperCase()) &&
        (filter.kind === undefined || e.kind === filter.kind) &&
        (filter.vmName === undefined || e.vmName?.toLowerCase() === filter.vmName.toLowerCase()) &&
        (filter.status === undefined || e.status === filter.status) &&
        (filter.afterSeq === undefined || e.seq > filter.afterSeq),
    );
  }

  clear(): void {
    this.entries = [];
  }
}
