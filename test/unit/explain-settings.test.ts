// The explain functions' authentication settings: off without EXPLAIN_AUDIENCE, the tenant is
// AKS_TENANT_ID's (required once an audience is set), the JWKS is the tenant's Entra one unless the
// local override names another, and plain HTTP is accepted for that override only on loopback.
import { describe, expect, it } from 'vitest';
import { loadSettings, SettingsError } from '../../shared/config/settings.js';
import { localAppSettings } from '../../local/stack/app-settings.js';

const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
const base = localAppSettings({
  kubeconfigPath: '/tmp/kubeconfig',
  armEndpoint: 'https://127.0.0.1:1',
  armCaCertPem: pem,
  bootstrapCaCertPem: pem,
  storageConnectionString: 'UseDevelopmentStorage=true',
  queueName: 'nodeclaim-events',
  unavailableOfferingsTable: 'unavailableofferings',
});
const tenant = '11111111-2222-3333-4444-555555555555';

describe('explain settings', () => {
  it('are absent without EXPLAIN_AUDIENCE (explain off)', () => {
    expect(loadSettings({ ...base, AKS_TENANT_ID: tenant }).explain).toBeUndefined();
  });

  it('take the tenant from AKS_TENANT_ID and read its Entra JWKS; audiences are comma-separated', () => {
    expect(
      loadSettings({ ...base, AKS_TENANT_ID: tenant, EXPLAIN_AUDIENCE: 'api://explain, 0000-client-id' })
        .explain,
    ).toEqual({
      tenantId: tenant,
      audiences: ['api://explain', '0000-client-id'],
      jwksUri: `https://login.microsoftonline.com/${tenant}/discovery/v2.0/keys`,
    });
  });

  it('refuse an audience without a tenant', () => {
    expect(() => loadSettings({ ...base, EXPLAIN_AUDIENCE: 'api://explain' })).toThrow(/AKS_TENANT_ID/);
  });

  it('take a JWKS override over https anywhere, over http only on loopback', () => {
    const withOverride = (uri: string) =>
      loadSettings({
        ...base,
        AKS_TENANT_ID: tenant,
        EXPLAIN_AUDIENCE: 'api://explain',
        EXPLAIN_JWKS_URI: uri,
      });
    expect(withOverride('http://127.0.0.1:4010/t/discovery/v2.0/keys').explain?.jwksUri).toBe(
      'http://127.0.0.1:4010/t/discovery/v2.0/keys',
    );
    expect(withOverride('https://keys.example/jwks').explain?.jwksUri).toBe('https://keys.example/jwks');
    expect(() => withOverride('http://keys.example/jwks')).toThrow(SettingsError);
  });

  it('refuse a JWKS override without an audience', () => {
    expect(() => loadSettings({ ...base, EXPLAIN_JWKS_URI: 'http://127.0.0.1:1/keys' })).toThrow(
      /EXPLAIN_AUDIENCE/,
    );
  });
});
