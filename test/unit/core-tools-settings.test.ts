// The local.settings.json that `npm start -- --no-demo` writes for Functions Core Tools holds settings the
// app accepts, plus the two the Functions host reads itself.
import { expect, it } from 'vitest';
import { loadSettings } from '../../shared/config/settings.js';
import { localAppSettings } from '../../local/stack/app-settings.js';
import { coreToolsSettings } from '../../local/stack/core-tools-settings.js';

it('points the app at the local stack with settings loadSettings accepts', () => {
  const appSettings = localAppSettings({
    kubeconfigPath: '/tmp/nodeclaim-control-plane-x/admin.kubeconfig',
    armEndpoint: 'https://127.0.0.1:8443',
    armCaCertPem: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n',
    bootstrapCaCertPem: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n',
    storageConnectionString:
      'DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=a2V5;QueueEndpoint=http://127.0.0.1:1/devstoreaccount1;TableEndpoint=http://127.0.0.1:2/devstoreaccount1;BlobEndpoint=http://127.0.0.1:3/devstoreaccount1;',
    queueName: 'nodeclaim-events',
    unavailableOfferingsTable: 'unavailableofferings',
  });
  const file = coreToolsSettings(appSettings);
  expect(file.IsEncrypted).toBe(false);
  expect(file.Values.FUNCTIONS_WORKER_RUNTIME).toBe('node');
  expect(file.Values.AzureWebJobsStorage).toContain('BlobEndpoint=');
  const settings = loadSettings(file.Values);
  expect(settings.kubernetes).toEqual({
    mode: 'kubeconfig',
    kubeconfigPath: '/tmp/nodeclaim-control-plane-x/admin.kubeconfig',
  });
  expect(Object.values(file.Values).every((v) => typeof v === 'string')).toBe(true);
});
