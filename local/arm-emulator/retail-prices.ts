// The Azure Retail Prices API (GET /api/retail/prices) for the emulated catalog, in the real API's JSON
// shape: { BillingCurrency, CustomerEntityId, CustomerEntityType, Items, NextPageLink, Count }, paged
// with $skip. Only `field eq 'value'` clauses joined by `and` are understood in $filter, which is what
// the system sends; anything else is a 400, as the real API answers a filter it cannot parse.
//
// Prices: on-demand from the project's shipped static table (the emulator is "Azure" here, so a refresh
// returns the same numbers unless a test changes them); spot at a fifth of on-demand, an emulator
// choice in the range Azure's spot discounts fall in. Each size also gets a Windows item and a
// "Low Priority" item, so clients must filter as they would against the real API. Every region also
// has the Functions Flex Consumption meters (the cost command reads them), at the public list prices of
// the Flex Consumption plan in USD: execution time per GiB-second, executions per 10.
import { staticOnDemandPrices } from '../../shared/decisions/prices/static-prices.js';
import type { ServiceResponse } from './compute-service.js';
import type { ResourceSku } from './sku-catalog.js';

export interface RetailPriceItem {
  currencyCode: 'USD';
  tierMinimumUnits: number;
  retailPrice: number;
  unitPrice: number;
  armRegionName: string;
  location: string;
  effectiveStartDate: string;
  meterId: string;
  meterName: string;
  productId: string;
  skuId: string;
  productName: string;
  skuName: string;
  serviceName: 'Virtual Machines' | 'Functions';
  serviceId: string;
  serviceFamily: 'Compute';
  unitOfMeasure: '1 Hour' | '1 GiB Second' | '10';
  type: 'Consumption';
  isPrimaryMeterRegion: boolean;
  armSkuName: string;
}

export const SPOT_FRACTION = 0.2;
const FILTER_FIELDS = new Set([
  'serviceName',
  'priceType',
  'armRegionName',
  'currencyCode',
  'serviceFamily',
  'armSkuName',
]);

function round(price: number): number {
  return Math.round(price * 10_000) / 10_000;
}

/** Every price item of the catalog: on-demand, spot, low priority and Windows, per size and region. */
function retailPriceItems(catalog: readonly ResourceSku[]): RetailPriceItem[] {
  const items: RetailPriceItem[] = [];
  for (const sku of catalog) {
    const meter = sku.name.replace(/^Standard_/, '').replace(/_/g, ' ');
    const series = sku.family.replace(/^standard/, '').replace(/Family$/, '');
    for (const region of sku.locations) {
      const onDemand = staticOnDemandPrices[region]?.[sku.name];
      if (onDemand === undefined) continue;
      const item = (suffix: string, product: string, price: number): RetailPriceItem => ({
        currencyCode: 'USD',
        tierMinimumUnits: 0,
        retailPrice: round(price),
        unitPrice: round(price),
        armRegionName: region,
        location: region,
        effectiveStartDate: '2026-01-01T00:00:00Z',
        meterId: `${region}-${sku.name}-${suffix || 'regular'}${product ? '-windows' : ''}`,
        meterName: `${meter}${suffix}`,
        productId: `DZH318Z0${series}`,
        skuId: `DZH318Z0${series}/${sku.name}`,
        productName: `Virtual Machines ${series} Series${product}`,
        skuName: `${meter}${suffix}`,
        serviceName: 'Virtual Machines',
        serviceId: 'DZH313Z7MMC8',
        serviceFamily: 'Compute',
        unitOfMeasure: '1 Hour',
        type: 'Consumption',
        isPrimaryMeterRegion: true,
        armSkuName: sku.name,
      });
      items.push(
        item('', '', onDemand),
        item(' Spot', '', onDemand * SPOT_FRACTION),
        item(' Low Priority', '', onDemand * SPOT_FRACTION),
        item('', ' Windows', onDemand * 1.9),
      );
    }
  }
  for (const region of new Set(catalog.flatMap((sku) => sku.locations))) items.push(...flexItems(region));
  return items;
}

/** Flex Consumption's meters: [meter name, unit, USD per unit]. */
export const FLEX_CONSUMPTION_METERS: readonly (readonly [string, '1 GiB Second' | '10', number])[] = [
  ['On Demand Execution Time', '1 GiB Second', 0.000026],
  ['On Demand Total Executions', '10', 0.000004],
  ['Always Ready Baseline', '1 GiB Second', 0.000004],
  ['Always Ready Execution Time', '1 GiB Second', 0.000016],
  ['Always Ready Total Executions', '10', 0.000004],
];

function flexItems(region: string): RetailPriceItem[] {
  return FLEX_CONSUMPTION_METERS.map(([meterName, unitOfMeasure, price]) => ({
    currencyCode: 'USD',
    tierMinimumUnits: 0,
    retailPrice: price,
    unitPrice: price,
    armRegionName: region,
    location: region,
    effectiveStartDate: '2026-01-01T00:00:00Z',
    meterId: `${region}-flex-${meterName.toLowerCase().replace(/ /g, '-')}`,
    meterName,
    productId: 'DZH317F1HKN0',
    skuId: 'DZH317F1HKN0/0001',
    productName: 'Functions Flex Consumption',
    skuName: 'Flex Consumption',
    serviceName: 'Functions',
    serviceId: 'DZH3184WBNNX',
    serviceFamily: 'Compute',
    unitOfMeasure,
    type: 'Consumption',
    isPrimaryMeterRegion: true,
    armSkuName: '',
  }));
}

type FilterClause = { field: string; value: string };

function parseFilter(filter: string | null): FilterClause[] | string {
  if (filter === null || filter.trim() === '') return [];
  const clauses: FilterClause[] = [];
  for (const part of filter.split(/\s+and\s+/i)) {
    const match = /^\s*(\w+)\s+eq\s+'([^']*)'\s*$/i.exec(part);
    if (!match) return `cannot parse "${part.trim()}"`;
    const field = [...FILTER_FIELDS].find((f) => f.toLowerCase() === (match[1] ?? '').toLowerCase());
    if (!field) return `unknown field "${match[1]}"`;
    clauses.push({ field, value: match[2] ?? '' });
  }
  return clauses;
}

function fieldOf(item: RetailPriceItem, field: string): string {
  if (field === 'priceType') return item.type;
  return String((item as unknown as Record<string, unknown>)[field] ?? '');
}

export function handleRetailPrices(
  method: string,
  url: URL,
  catalog: readonly ResourceSku[],
  pageSize: number,
): ServiceResponse {
  if (method !== 'GET') {
    return {
      status: 405,
      body: { Error: { Code: 'MethodNotAllowed', Message: `${method} is not supported` } },
      headers: {},
    };
  }
  const clauses = parseFilter(url.searchParams.get('$filter'));
  if (typeof clauses === 'string') {
    return {
      status: 400,
      body: { Error: { Code: 'BadRequest', Message: `Invalid OData filter: ${clauses}` } },
      headers: {},
    };
  }
  const skipText = url.searchParams.get('$skip') ?? '0';
  const skip = /^\d+$/.test(skipText) ? Number(skipText) : NaN;
  if (!Number.isSafeInteger(skip)) {
    return {
      status: 400,
      body: { Error: { Code: 'BadRequest', Message: `Invalid $skip: ${skipText}` } },
      headers: {},
    };
  }
  // Field values compare case-insensitively, as the real API does for these fields.
  const matching = retailPriceItems(catalog).filter((item) =>
    clauses.every((c) => fieldOf(item, c.field).toLowerCase() === c.value.toLowerCase()),
  );
  const page = matching.slice(skip, skip + pageSize);
  let next: string | null = null;
  if (skip + pageSize < matching.length) {
    const nextUrl = new URL(url.toString());
    nextUrl.searchParams.set('$skip', String(skip + pageSize));
    next = nextUrl.toString();
  }
  return {
    status: 200,
    body: {
      BillingCurrency: 'USD',
      CustomerEntityId: 'Default',
      CustomerEntityType: 'Retail',
      Items: page,
      NextPageLink: next,
      Count: page.length,
    },
    headers: {},
  };
}
