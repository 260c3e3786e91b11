// The Bicep and Terraform deployments must set every app setting the Function App needs, by the names
// shared/config/settings.ts reads, with no secret values. Neither `bicep` nor `terraform` can be installed
// here, so the Bicep is read as text and the Terraform through HashiCorp's HCL parser (compiled to WASM in
// @cdktf/hcl2json); what this cannot see (resource schemas, ARM validation) is listed in infra/README.md.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadSettings, SETTING_ALIASES, SettingsError } from '../../shared/config/settings.js';
import {
  bicepAppSettings,
  terraformAppSettings,
  terraformFiles,
  type AppSettings,
  type Hcl,
} from '../support/infra-templates.js';
import { bindingExpressions, namesTheFunctionsCodeReads } from '../support/setting-reads.js';

const root = join(import.meta.dirname, '..', '..');
const read = (path: string): string => readFileSync(join(root, path), 'utf8');

/**
 * The settings loadSettings reports missing when only `provided` are set. Present settings get a
 * placeholder value, so format complaints are ignored and only absence counts; "A or B must be set"
 * is satisfied by either. Repeats until stable, because one setting can make another required
 * (CLUSTER_ENDPOINT needs KUBE_CA_CERT).
 */
function missingSettings(provided: ReadonlySet<string>): string[] {
  const env: Record<string, string> = {};
  for (const name of provided) env[name] = 'x';
  const problems = settingsProblems(env);
  const missing: string[] = [];
  for (const problem of problems) {
    const single = /^([A-Za-z_][A-Za-z0-9_]*) is missing/.exec(problem);
    const either = /^([A-Za-z_][A-Za-z0-9_]*) (?:\([^)]*\) )?or ([A-Za-z_][A-Za-z0-9_]*)\b.*must be set/.exec(
      problem,
    );
    if (single) missing.push(single[1] as string);
    else if (either) missing.push(`${either[1]} or ${either[2]}`);
  }
  return missing.sort();
}

function settingsProblems(env: Record<string, string>): string[] {
  try {
    loadSettings(env);
    return [];
  } catch (error) {
    if (!(error instanceof SettingsError)) throw error;
    return error.message
      .split('\n')
      .slice(1)
      .map((line) => line.replace(/^\s*-\s*/, ''));
  }
}

/** Every setting name the app reads (found by running its readers) and every %NAME% the host resolves. */
function namesTheAppReads(): Set<string> {
  return new Set([...namesTheFunctionsCodeReads(), ...bindingExpressions()]);
}

const HOST_OVERRIDE = 'AzureFunctionsJobHost__';
// The storage provider keys the Durable Task Scheduler provider reads that host.json (Azure Storage)
// does not set: https://learn.microsoft.com/azure/azure-functions/durable/durable-task-scheduler/quickstart-durable-task-scheduler
const DURABLE_TASK_SCHEDULER_PROVIDER_KEYS = ['type', 'connectionStringName'];

/**
 * Settings the Functions host reads because of host.json: an AzureFunctionsJobHost__<path> override of a
 * host.json value (its parent object must be in host.json, and the key there or one the Durable Task
 * Scheduler provider documents), and the setting a connectionStringName override names.
 */
function hostReads(settings: AppSettings): string[] {
  const host = JSON.parse(read('host.json')) as Record<string, unknown>;
  const known: string[] = [];
  for (const [name, value] of settings) {
    if (!name.startsWith(HOST_OVERRIDE)) continue;
    const path = name.slice(HOST_OVERRIDE.length).split('__');
    const key = path.pop() as string;
    const parent = path.reduce<unknown>(
      (node, part) => (node as Record<string, unknown> | undefined)?.[part],
      host,
    );
    if (typeof parent !== 'object' || parent === null) continue;
    const inProvider = path.join('.') === 'extensions.durableTask.storageProvider';
    if (!(key in parent) && !(inProvider && DURABLE_TASK_SCHEDULER_PROVIDER_KEYS.includes(key))) continue;
    known.push(name);
    if (key === 'connectionStringName')
      known.push(/^'(.*)'$|^(.*)$/.exec(value)?.slice(1).find(Boolean) ?? value);
  }
  return known;
}

// Read by the Functions host, Azure SDK credentials or the Application Insights agent, not by our code.
const platformSettings = new Set([
  'AzureWebJobsStorage__credential',
  'AzureWebJobsStorage__clientId',
  'AZURE_CLIENT_ID',
]);

// Flex Consumption rejects these: the runtime and version come from functionAppConfig.
const forbiddenOnFlexConsumption = [
  'FUNCTIONS_WORKER_RUNTIME',
  'FUNCTIONS_EXTENSION_VERSION',
  'WEBSITE_NODE_DEFAULT_VERSION',
  'WEBSITE_RUN_FROM_PACKAGE',
  'WEBSITE_CONTENTAZUREFILECONNECTIONSTRING',
];

const secretPatterns: readonly [string, RegExp][] = [
  ['a storage account key', /AccountKey\s*=/i],
  ['a storage connection string', /DefaultEndpointsProtocol\s*=/i],
  ['a SAS token', /SharedAccessSignature|[?&]sig=/i],
  [
    'a key listed at deploy time',
    /listKeys\(|primary_access_key|secondary_access_key|primary_connection_string/,
  ],
  ['a bootstrap token', /\b[a-z0-9]{6}\.[a-z0-9]{16}\b/],
  ['a password', /password/i],
];

function secretsIn(settings: AppSettings): string[] {
  const found: string[] = [];
  for (const [name, value] of settings) {
    for (const [what, pattern] of secretPatterns)
      if (pattern.test(value)) found.push(`${name} holds ${what}`);
  }
  return found;
}

describe('infrastructure app settings', () => {
  let bicep: AppSettings;
  let terraform: AppSettings;
  let terraformSource: Hcl[];

  beforeAll(async () => {
    bicep = bicepAppSettings();
    terraformSource = await terraformFiles();
    terraform = terraformAppSettings(terraformSource);
  });

  it('finds the required settings from loadSettings, so a missing one is reported', () => {
    // The check below is only as good as this: an infra that forgets a setting must show up as missing.
    const all = new Set(bicep.keys());
    expect(missingSettings(all)).toEqual([]);
    all.delete('BOOTSTRAP_CA_CERT');
    all.delete('KUBE_CA_CERT');
    expect(missingSettings(all)).toEqual(['BOOTSTRAP_CA_CERT', 'KUBE_CA_CERT']);
    expect(missingSettings(new Set())).toContain('AzureWebJobsStorage or AzureWebJobsStorage__accountName');
    expect(missingSettings(new Set())).toContain('KUBECONFIG or CLUSTER_ENDPOINT');
  });

  it('Bicep sets every setting loadSettings requires', () => {
    expect(missingSettings(new Set(bicep.keys()))).toEqual([]);
  });

  it('Terraform sets every setting loadSettings requires', () => {
    expect(missingSettings(new Set(terraform.keys()))).toEqual([]);
  });

  it('both use the identity-based variants: API server + Entra token, storage account name', () => {
    for (const settings of [bicep, terraform]) {
      expect(settings.has('CLUSTER_ENDPOINT')).toBe(true);
      expect(settings.has('KUBECONFIG')).toBe(false);
      expect(settings.has('AzureWebJobsStorage__accountName')).toBe(true);
      expect(settings.has('AzureWebJobsStorage')).toBe(false);
      expect(settings.get('AzureWebJobsStorage__credential')).toMatch(/managedidentity/);
    }
  });

  it('a keyless AzureWebJobsStorage (written by azurerm for identity-based apps) does not win over the identity', () => {
    const example = JSON.parse(read('local.settings.example.json')) as { Values: Record<string, string> };
    const keyless =
      'DefaultEndpointsProtocol=https;AccountName=app;AccountKey=;EndpointSuffix=core.windows.net';
    const env = { ...example.Values, AzureWebJobsStorage__accountName: 'app', AzureWebJobsStorage: keyless };
    expect(loadSettings(env).storage).toEqual({ accountName: 'app' });
    const withKey = keyless.replace('AccountKey=;', 'AccountKey=abc;');
    expect(loadSettings({ ...env, AzureWebJobsStorage: withKey }).storage.connectionString).toBe(withKey);
  });

  it('both set every %NAME% binding expression of host.json and the functions', () => {
    const expressions = [...bindingExpressions()];
    expect(expressions).toContain('DURABLE_TASK_HUB');
    expect(expressions.filter((name) => !bicep.has(name))).toEqual([]);
    expect(expressions.filter((name) => !terraform.has(name))).toEqual([]);
  });

  it('Bicep and Terraform set the same settings', () => {
    expect([...terraform.keys()].sort()).toEqual([...bicep.keys()].sort());
  });

  it('reads a host.json override only where host.json has the value (or the scheduler provider documents it)', () => {
    const probe = new Map([
      [`${HOST_OVERRIDE}extensions__durableTask__storageProvider__partitionCount`, '4'],
      [`${HOST_OVERRIDE}extensions__durableTask__storageProvider__connectionStringName`, "'CONN'"],
      [`${HOST_OVERRIDE}extensions__durableTask__storageProvider__partitionCuont`, '4'],
      [`${HOST_OVERRIDE}extensions__durableTsak__hubName`, 'x'],
    ]);
    expect(hostReads(probe)).toEqual([
      `${HOST_OVERRIDE}extensions__durableTask__storageProvider__partitionCount`,
      `${HOST_OVERRIDE}extensions__durableTask__storageProvider__connectionStringName`,
      'CONN',
    ]);
  });

  it('every setting they set is one the app, the host or the SDKs read (no typos)', () => {
    const known = namesTheAppReads();
    expect(known).toContain('VNET_SUBNET_ID');
    const unknown = (settings: AppSettings): string[] => {
      const host = new Set(hostReads(settings));
      return [...settings.keys()].filter(
        (name) => !known.has(name) && !platformSettings.has(name) && !host.has(name),
      );
    };
    expect(unknown(bicep)).toEqual([]);
    expect(unknown(terraform)).toEqual([]);
  });

  it("both write upstream's and the Azure provider's names, never the aliases kept for older settings", () => {
    const aliases = Object.values(SETTING_ALIASES).flat();
    expect(aliases).toContain('AZURE_SUBNET_ID');
    for (const settings of [bicep, terraform]) {
      expect(aliases.filter((alias) => settings.has(alias))).toEqual([]);
      for (const name of Object.keys(SETTING_ALIASES)) expect(settings.has(name), name).toBe(true);
      expect(settings.has('SPOT_TO_SPOT_CONSOLIDATION')).toBe(false);
    }
  });

  it('no setting Flex Consumption rejects', () => {
    for (const settings of [bicep, terraform]) {
      expect(forbiddenOnFlexConsumption.filter((name) => settings.has(name))).toEqual([]);
    }
  });

  it('no setting holds a secret, nor a cluster-wide bootstrap token (every node gets its own)', () => {
    expect(secretsIn(new Map([['PROBE', 'DefaultEndpointsProtocol=https;AccountKey=abc']]))).toHaveLength(2);
    expect(secretsIn(bicep)).toEqual([]);
    expect(secretsIn(terraform)).toEqual([]);
    expect(bicep.has('BOOTSTRAP_TOKEN')).toBe(false);
    expect(terraform.has('BOOTSTRAP_TOKEN')).toBe(false);
  });

  it('no key or connection string is read anywhere in the templates, and shared keys are off', () => {
    const sources = [
      ...readdirSync(join(root, 'infra/bicep/modules'), { recursive: true, encoding: 'utf8' })
        .filter((f) => f.endsWith('.bicep'))
        .map((f) => read(`infra/bicep/modules/${f}`)),
      read('infra/bicep/main.bicep'),
      ...readdirSync(join(root, 'infra/terraform'))
        .filter((f) => f.endsWith('.tf'))
        .map((f) => read(`infra/terraform/${f}`)),
    ];
    const keyReads =
      /listKeys\(|primary_access_key|secondary_access_key|connection_string\s*=\s*azurerm_storage|AccountKey=/;
    expect(sources.filter((source) => keyReads.test(source))).toEqual([]);
    expect(read('infra/bicep/modules/storage.bicep')).toMatch(/allowSharedKeyAccess:\s*false/);
    expect(read('infra/terraform/storage.tf')).toMatch(/shared_access_key_enabled\s*=\s*false/);
  });
});
