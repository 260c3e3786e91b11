// Azure Retail Prices API adapter: VM prices for one region, fetched at startup and every 12 hours
// (as the Azure provider refreshes), with the shipped static table as the answer until a refresh
// succeeds and after a failed one. The API is public and needs no credentials.
//
// GET {endpoint}/api/retail/prices?$filter=serviceName eq 'Virtual Machines' and priceType eq
// 'Consumption' and armRegionName eq '<region>' answers { Items, NextPageLink, Count }; every page is
// followed. Which items count, and how, is decided by shared/decisions/prices/price-book.ts.
import { request as httpsRequest } from 'node:https';
import { request as httpRequest } from 'node:http';
import {
  refreshedPriceBook,
  staticPriceBook,
  type PriceBook,
  type RetailPriceItem,
} from '../decisions/prices/price-book.js';

export const RETAIL_PRICES_ENDPOINT = 'https://prices.azure.com';
export const PRICE_REFRESH_INTERVAL_MS = 12 * 60 * 60 * 1000;
const API_VERSION = '2023-01-01-preview';
const REQUEST_TIMEOUT_MS = 30_000;
/** A guard against a NextPageLink loop; a region has a few dozen pages of VM prices. */
const MAX_PAGES = 500;

export interface RetailPricesPage {
  Items?: RetailPriceItem[];
  NextPageLink?: string | null;
  Count?: number;
}

export type GetJson = (url: string) => Promise<unknown>;

export interface RetailPricesOptions {
  region: string;
  endpoint?: string;
  /** Extra CA to trust (the local emulator's); unset against the real API. */
  caCertPem?: string;
  refreshIntervalMs?: number;
  now?: () => number;
  getJson?: GetJson;
  /** Told of every failed refresh (the book stays what it was); the process logs it. */
  onRefreshError?: (error: Error) => void;
}

/** What the lifecycle reads prices from: the current book, answered at once. */
export interface PriceCatalog {
  prices(): PriceBook;
}

/** Every VM Consumption price item of the region, following NextPageLink. */
export function fetchRetailPriceItems(
  endpoint: string,
  region: string,
  getJson: GetJson,
): Promise<RetailPriceItem[]> {
  return fetchRetailPrices(
    endpoint,
    `serviceName eq 'Virtual Machines' and priceType eq 'Consumption' and armRegionName eq '${region}'`,
    getJson,
  );
}

/** Every price item an OData `$filter` selects, following NextPageLink. */
export async function fetchRetailPrices(
  endpoint: string,
  filter: string,
  getJson: GetJson,
): Promise<RetailPriceItem[]> {
  const first = new URL('/api/retail/prices', endpoint);
  first.searchParams.set('api-version', API_VERSION);
  first.searchParams.set('$filter', filter);
  const items: RetailPriceItem[] = [];
  let next: string | null | undefined = first.toString();
  for (let page = 0; next; page++) {
    if (page >= MAX_PAGES) throw new Error(`retail prices: more than ${MAX_PAGES} pages for ${filter}`);
    const body = (await getJson(next)) as RetailPricesPage;
    if (!body || !Array.isArray(body.Items)) throw new Error('retail prices: the answer has no Items list');
    items.push(...body.Items);
    next = body.NextPageLink;
  }
  return items;
}

/** A GET that parses JSON, trusting `caCertPem` when given; non-2xx answers are errors. */
export function httpGetJson(caCertPem?: string): GetJson {
  return (url) =>
    new Promise((resolve, reject) => {
      const target = new URL(url);
      const request = (target.protocol === 'http:' ? httpRequest : httpsRequest)(
        target,
        { method: 'GET', timeout: REQUEST_TIMEOUT_MS, ...(caCertPem ? { ca: caCertPem } : {}) },
        (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            const status = response.statusCode ?? 0;
            if (status < 200 || status >= 300) {
              reject(
                new Error(`retail prices: GET ${target.pathname} answered ${status}: ${text.slice(0, 200)}`),
              );
              return;
            }
            try {
              resolve(JSON.parse(text));
            } catch (error) {
              reject(new Error(`retail prices: the answer is not JSON: ${(error as Error).message}`));
            }
          });
          response.on('error', reject);
        },
      );
      request.on('timeout', () =>
        request.destroy(new Error(`retail prices: no answer in ${REQUEST_TIMEOUT_MS} ms`)),
      );
      request.on('error', reject);
      request.end();
    });
}

/**
 * The region's current price book. `prices()` answers at once with what is known and starts a refresh
 * when the last successful one is older than the interval (one at a time); `refresh()` waits for it.
 * A failed refresh keeps the previous book and is retried on the next call after a minute.
 */
export class RetailPriceCatalog implements PriceCatalog {
  private book: PriceBook;
  private refreshedAt: number | undefined;
  private failedAt: number | undefined;
  private inFlight: Promise<PriceBook> | undefined;
  private readonly endpoint: string;
  private readonly intervalMs: number;
  private readonly now: () => number;
  private readonly getJson: GetJson;
  lastError: Error | undefined;

  constructor(private readonly options: RetailPricesOptions) {
    this.book = staticPriceBook(options.region);
    this.endpoint = options.endpoint ?? RETAIL_PRICES_ENDPOINT;
    this.intervalMs = options.refreshIntervalMs ?? PRICE_REFRESH_INTERVAL_MS;
    this.now = options.now ?? Date.now;
    this.getJson = options.getJson ?? httpGetJson(options.caCertPem);
  }

  prices(): PriceBook {
    if (this.due()) void this.refresh().catch(() => undefined);
    return this.book;
  }

  async refresh(): Promise<PriceBook> {
    this.inFlight ??= this.fetch().finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  private due(): boolean {
    if (this.inFlight) return false;
    const now = this.now();
    if (this.failedAt !== undefined && now - this.failedAt < 60_000) return false;
    return this.refreshedAt === undefined || now - this.refreshedAt >= this.intervalMs;
  }

  private async fetch(): Promise<PriceBook> {
    try {
      const items = await fetchRetailPriceItems(this.endpoint, this.options.region, this.getJson);
      const book = refreshedPriceBook(this.options.region, items, new Date(this.now()).toISOString());
      if (!book) throw new Error(`retail prices: the answer has no VM price for ${this.options.region}`);
      this.book = book;
      this.refreshedAt = this.now();
      this.failedAt = undefined;
      this.lastError = undefined;
      return book;
    } catch (error) {
      this.failedAt = this.now();
      this.lastError = error as Error;
      this.options.onRefreshError?.(this.lastError);
      throw error;
    }
  }
}
