// The Storage settings of both modes the local stack writes: identity-based (the storage front's URLs and
// CA, as the Functions host's AzureWebJobsStorage__* names) and the connection string (--storage-keys).
// A bad service URL is named.
import { describe, expect, it } from 'vitest';
import { loadSettings, SettingsError } from '../../shared/config/settings.js';
import { localAppSettings } from '../../local/stack/app-settings.js';

const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
const base = {
  kubeconfigPath: '/tmp/kubeconfig',
  armEndpoint: 'https://127.0.0.1:1',
  armCaCertPem: pem,
  bootstrapCaCertPem: pem,
  queueName: 'nodeclaim-events',
  unavailableOfferingsTable: 'unavailableofferings',
};

describe('storage settings of the local stack', () => {
  it('identity-based: account, service URLs and CA, no connection string', () => {
    const appSettings = localAppSettings({
      ...base,
      storageIdentity: {
        accountName: 'devstoreaccount1',
        queueServiceUri: 'https://127.0.0.1:4443/devstoreaccount1',
        tableServiceUri: 'https://127.0.0.1:4444/devstoreaccount1/',
        caCertPem: pem,
      },
    });
    expect(appSettings.AzureWebJobsStorage).toBeUndefined();
    expect(loadSettings(appSettings).storage).toEqual({
      accountName: 'devstoreaccount1',
      queueServiceUri: 'https://127.0.0.1:4443/devstoreaccount1',
      tableServiceUri: 'https://127.0.0.1:4444/devstoreaccount1',
      // Settings are trimmed, as every app setting is.
      caCertPem: pem.trim(),
    });
  });

  it('with the account key: the connection string only', () => {
    const connectionString = 'UseDevelopmentStorage=true';
    const settings = loadSettings(localAppSettings({ ...base, storageConnectionString: connectionString }));
    expect(settings.storage).toEqual({ connectionString });
  });

  it('names a service URL that is not https', () => {
    const appSettings = {
      ...localAppSettings({ ...base, storageConnectionString: 'UseDevelopmentStorage=true' }),
      AzureWebJobsStorage: '',
      AzureWebJobsStorage__accountName: 'app',
      AzureWebJobsStorage__queueServiceUri: 'http://app.queue.core.windows.net',
    };
    expect(() => loadSettings(appSettings)).toThrow(SettingsError);
    expect(() => loadSettings(appSettings)).toThrow(/AzureWebJobsStorage__queueServiceUri .*https:\/\/ URL/);
  });
});
