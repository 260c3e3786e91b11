// local.settings.example.json is what a user copies to run `func start` against the local stack: it must
// name every setting the app requires, in a form the settings module accepts.
import { readFileSync } from 'node:fs';
import { expect, test } from 'vitest';
import { loadSettings } from '../../shared/config/settings.js';

test('local.settings.example.json is accepted by the settings module', () => {
  const example = JSON.parse(
    readFileSync(new URL('../../local.settings.example.json', import.meta.url), 'utf8'),
  ) as {
    Values: Record<string, string>;
  };
  const settings = loadSettings(example.Values);
  expect(settings.clusterName).toBe('local');
  expect(settings.kubernetes.mode).toBe('kubeconfig');
  expect(settings.storage.connectionString).toBe('UseDevelopmentStorage=true');
  expect(settings.lifecycle.sweepSchedule).toBe('*/15 * * * * *');
});

test('a missing setting stops startup with a message naming it', () => {
  expect(() => loadSettings({})).toThrow(/CLUSTER_NAME is missing/);
  expect(() => loadSettings({})).toThrow(/AZURE_SUBSCRIPTION_ID is missing/);
});

test('RETAIL_PRICES_ENDPOINT defaults to the public Retail Prices API and must be an https URL', () => {
  const example = JSON.parse(
    readFileSync(new URL('../../local.settings.example.json', import.meta.url), 'utf8'),
  ) as { Values: Record<string, string> };
  expect(loadSettings(example.Values).azure.retailPricesEndpoint).toBe('https://127.0.0.1:8443');
  const { RETAIL_PRICES_ENDPOINT: _endpoint, ...withoutEndpoint } = example.Values;
  expect(loadSettings(withoutEndpoint).azure.retailPricesEndpoint).toBe('https://prices.azure.com');
  expect(() =>
    loadSettings({ ...example.Values, RETAIL_PRICES_ENDPOINT: 'http://prices.azure.com' }),
  ).toThrow(/RETAIL_PRICES_ENDPOINT is "http:\/\/prices.azure.com": expected an https:\/\/ URL/);
});
