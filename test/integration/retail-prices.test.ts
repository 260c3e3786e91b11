// The retail-prices adapter against the ARM emulator's /api/retail/prices over HTTPS: paging through
// NextPageLink, the items it keeps and skips, and the static table as the answer when a refresh fails.
// Nothing is mocked; the real Azure Retail Prices API cannot be reached from here, so the emulator
// serves the same JSON shape for its catalog.
import { request as httpsRequest } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startArmEmulator, type ArmEmulator } from '../../local/arm-emulator/index.js';
import { SPOT_FRACTION } from '../../local/arm-emulator/retail-prices.js';
import { httpGetJson, RetailPriceCatalog } from '../../shared/azure/retail-prices.js';
import { priceOf } from '../../shared/decisions/prices/price-book.js';
import { staticOnDemandPrices } from '../../shared/decisions/prices/static-prices.js';

let emulator: ArmEmulator;

beforeAll(async () => {
  // A small page size makes the adapter follow NextPageLink many times.
  emulator = await startArmEmulator({ pageSizes: { prices: 7 } });
});

afterAll(async () => {
  await emulator.stop();
});

function rawGet(path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpsRequest(new URL(path, emulator.url), { ca: emulator.caCertPem }, (response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk.toString()));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.on('error', reject);
    request.end();
  });
}

describe('retail prices through the adapter and the emulator', () => {
  it('reads every page and keeps on-demand and spot Linux prices only', async () => {
    const pages: string[] = [];
    const getJson = httpGetJson(emulator.caCertPem);
    const catalog = new RetailPriceCatalog({
      region: 'westus2',
      endpoint: emulator.url,
      getJson: (url) => {
        pages.push(url);
        return getJson(url);
      },
    });
    expect(catalog.prices().source).toBe('static');
    const book = await catalog.refresh();
    expect(book.source).toBe('retail-prices-api');
    expect(pages.length).toBeGreaterThan(10);
    expect(new URL(pages[0] ?? '').searchParams.get('$filter')).toBe(
      "serviceName eq 'Virtual Machines' and priceType eq 'Consumption' and armRegionName eq 'westus2'",
    );
    const known = staticOnDemandPrices['westus2'] ?? {};
    for (const [size, price] of Object.entries(known)) {
      // Not the Windows price (1.9×) nor the Low Priority one.
      expect(priceOf(book, size, 'on-demand')).toBe(price);
      expect(priceOf(book, size, 'spot')).toBeCloseTo(price * SPOT_FRACTION, 4);
    }
    expect(catalog.prices()).toBe(book);
  });

  it('keeps the static table when the API cannot be reached, and says why', async () => {
    const catalog = new RetailPriceCatalog({ region: 'eastus', endpoint: 'https://127.0.0.1:1' });
    await expect(catalog.refresh()).rejects.toThrow();
    expect(catalog.lastError).toBeDefined();
    const book = catalog.prices();
    expect(book.source).toBe('static');
    expect(priceOf(book, 'Standard_D2s_v5', 'on-demand')).toBe(0.096);
    // Without a spot price, spot is priced like on-demand until a refresh brings one.
    expect(priceOf(book, 'Standard_D2s_v5', 'spot')).toBe(0.096);
  });

  it('answers a filter it cannot parse with 400, as the real API does', async () => {
    const response = await rawGet(
      `/api/retail/prices?$filter=${encodeURIComponent("contains(meterName, 'Spot')")}`,
    );
    expect(response.status).toBe(400);
    expect(JSON.parse(response.body)).toMatchObject({ Error: { Code: 'BadRequest' } });
  });

  it('serves the real answer shape: Items, NextPageLink and Count', async () => {
    const response = await rawGet(
      `/api/retail/prices?$filter=${encodeURIComponent("armRegionName eq 'westeurope' and armSkuName eq 'Standard_E4s_v5'")}`,
    );
    const body = JSON.parse(response.body) as {
      Items: { meterName: string; retailPrice: number }[];
      NextPageLink: unknown;
      Count: number;
    };
    expect(body.Count).toBe(4);
    expect(body.NextPageLink).toBeNull();
    expect(body.Items.map((i) => i.meterName).sort()).toEqual([
      'E4s v5',
      'E4s v5',
      'E4s v5 Low Priority',
      'E4s v5 Spot',
    ]);
  });
});
