// Upstream's and the Azure provider's setting names are read, and the names this app used before still
// work as aliases: VNET_SUBNET_ID / AZURE_SUBNET_ID, AZURE_NODE_RESOURCE_GROUP / AZURE_RESOURCE_GROUP,
// LOCATION / AZURE_LOCATION, SSH_PUBLIC_KEY / NODE_SSH_PUBLIC_KEY, CLUSTER_ENDPOINT / KUBE_API_SERVER_URL,
// FEATURE_GATES=SpotToSpotConsolidation=… / SPOT_TO_SPOT_CONSOLIDATION. Conflicts are named.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadSettings, SETTING_ALIASES } from '../../shared/config/settings.js';

const example = (
  JSON.parse(readFileSync(new URL('../../local.settings.example.json', import.meta.url), 'utf8')) as {
    Values: Record<string, string>;
  }
).Values;

/** The example with every upstream name moved to its alias. */
function withAliases(): Record<string, string> {
  const env = { ...example };
  for (const [name, [alias]] of Object.entries(SETTING_ALIASES)) {
    if (env[name] === undefined) continue;
    env[alias] = env[name];
    delete env[name];
  }
  return env;
}

const entraEnv = (): Record<string, string> => {
  const { KUBECONFIG: _kubeconfig, ...rest } = example;
  return { ...rest, KUBE_CA_CERT: example['BOOTSTRAP_CA_CERT'] ?? '' };
};

describe('setting names', () => {
  it('the example uses the upstream names', () => {
    for (const name of ['VNET_SUBNET_ID', 'AZURE_NODE_RESOURCE_GROUP', 'LOCATION', 'SSH_PUBLIC_KEY'])
      expect(example[name], name).toBeDefined();
  });

  it('reads the former names as aliases, to the same settings', () => {
    expect(loadSettings(withAliases())).toEqual(loadSettings(example));
  });

  it('names the upstream setting when neither is set, with its alias', () => {
    const { VNET_SUBNET_ID: _subnet, ...env } = example;
    expect(() => loadSettings(env)).toThrow(/VNET_SUBNET_ID is missing \(alias AZURE_SUBNET_ID\)/);
  });

  it('names the alias a bad value came from', () => {
    const env = withAliases();
    env['AZURE_SUBNET_ID'] = 'not-a-subnet';
    expect(() => loadSettings(env)).toThrow(/AZURE_SUBNET_ID is "not-a-subnet"/);
  });

  it('refuses a name and its alias set to different values, and accepts the same value twice', () => {
    expect(() => loadSettings({ ...example, AZURE_LOCATION: 'eastus' })).toThrow(
      /LOCATION and its alias AZURE_LOCATION are set to different values/,
    );
    expect(loadSettings({ ...example, AZURE_LOCATION: example['LOCATION'] ?? '' }).azure.location).toBe(
      example['LOCATION'],
    );
  });

  it('CLUSTER_ENDPOINT is the API server of the app and of joining nodes; each can be overridden', () => {
    const { BOOTSTRAP_API_SERVER_URL: _bootstrap, ...env } = entraEnv();
    const settings = loadSettings({ ...env, CLUSTER_ENDPOINT: 'https://cluster.example:443' });
    expect(settings.kubernetes).toMatchObject({ mode: 'entra', apiServerUrl: 'https://cluster.example:443' });
    expect(settings.bootstrap.apiServerUrl).toBe('https://cluster.example:443');
    const legacy = loadSettings({ ...env, KUBE_API_SERVER_URL: 'https://cluster.example:443' });
    expect(legacy.kubernetes).toEqual(settings.kubernetes);
    const split = loadSettings({
      ...env,
      CLUSTER_ENDPOINT: 'https://cluster.example:443',
      BOOTSTRAP_API_SERVER_URL: 'https://private.example:443',
    });
    expect(split.bootstrap.apiServerUrl).toBe('https://private.example:443');
  });
});

describe('FEATURE_GATES', () => {
  const spotToSpot = (env: Record<string, string>) =>
    loadSettings({ ...example, ...env }).disruption.spotToSpotConsolidation;

  it("turns SpotToSpotConsolidation on and off as Karpenter's gate does", () => {
    expect(spotToSpot({})).toBe(false);
    expect(spotToSpot({ FEATURE_GATES: 'SpotToSpotConsolidation=true' })).toBe(true);
    expect(spotToSpot({ FEATURE_GATES: 'NodeRepair=false, SpotToSpotConsolidation=true' })).toBe(true);
    expect(spotToSpot({ FEATURE_GATES: 'SpotToSpotConsolidation=false' })).toBe(false);
  });

  it('turns NodeOverlay and CapacityBuffer on only when set, several gates in one value', () => {
    const gates = (env: Record<string, string>) => loadSettings({ ...example, ...env }).featureGates;
    expect(gates({})).toEqual({
      SpotToSpotConsolidation: false,
      NodeOverlay: false,
      CapacityBuffer: false,
      ReservedCapacity: true,
      NodeRepair: false,
    });
    expect(
      gates({ FEATURE_GATES: ' NodeOverlay=true, SpotToSpotConsolidation=true,NodeRepair=false' }),
    ).toEqual({
      SpotToSpotConsolidation: true,
      NodeOverlay: true,
      CapacityBuffer: false,
      ReservedCapacity: true,
      NodeRepair: false,
    });
    expect(gates({ FEATURE_GATES: 'CapacityBuffer=true' })).toEqual({
      SpotToSpotConsolidation: false,
      NodeOverlay: false,
      CapacityBuffer: true,
      ReservedCapacity: true,
      NodeRepair: false,
    });
  });

  it("ReservedCapacity is on unless set off, as upstream's beta gate; the groups it uses are named by ID", () => {
    const settings = (env: Record<string, string>) => loadSettings({ ...example, ...env });
    expect(settings({ FEATURE_GATES: 'ReservedCapacity=false' }).featureGates.ReservedCapacity).toBe(false);
    const sub = settings({}).azure.subscriptionId;
    const id = `/subscriptions/${sub}/resourceGroups/rg/providers/Microsoft.Compute/capacityReservationGroups/crg`;
    expect(settings({ CAPACITY_RESERVATION_GROUP_IDS: id }).capacityReservationGroups).toEqual([
      { id, subscriptionId: sub, resourceGroup: 'rg', name: 'crg' },
    ]);
    expect(() => settings({ CAPACITY_RESERVATION_GROUP_IDS: 'crg' })).toThrow(
      /CAPACITY_RESERVATION_GROUP_IDS has "crg": expected \/subscriptions\//,
    );
    const foreign = id.replace(sub, '11111111-1111-1111-1111-111111111111');
    expect(() => settings({ CAPACITY_RESERVATION_GROUP_IDS: foreign })).toThrow(
      /outside AZURE_SUBSCRIPTION_ID/,
    );
  });

  it('keeps SPOT_TO_SPOT_CONSOLIDATION as an alias that must agree', () => {
    expect(spotToSpot({ SPOT_TO_SPOT_CONSOLIDATION: 'true' })).toBe(true);
    expect(
      spotToSpot({ SPOT_TO_SPOT_CONSOLIDATION: 'true', FEATURE_GATES: 'SpotToSpotConsolidation=true' }),
    ).toBe(true);
    expect(() =>
      spotToSpot({ SPOT_TO_SPOT_CONSOLIDATION: 'true', FEATURE_GATES: 'SpotToSpotConsolidation=false' }),
    ).toThrow(
      /FEATURE_GATES says SpotToSpotConsolidation=false but its alias SPOT_TO_SPOT_CONSOLIDATION is true/,
    );
  });

  it('names a malformed entry, an unknown gate, and an upstream gate this app does not implement', () => {
    expect(() => spotToSpot({ FEATURE_GATES: 'SpotToSpotConsolidation' })).toThrow(
      /expected Gate=true or Gate=false/,
    );
    expect(() => spotToSpot({ FEATURE_GATES: 'SpotToSpot=true' })).toThrow(/unknown gate "SpotToSpot"/);
    expect(() => spotToSpot({ FEATURE_GATES: 'StaticCapacity=true' })).toThrow(
      /this app has no StaticCapacity feature/,
    );
  });
});

describe('NodeRepair and the repair settings', () => {
  const repair = (env: Record<string, string>) => loadSettings({ ...example, ...env }).repair;

  it("is off by default, as upstream's alpha gate, with the Azure provider's policies", () => {
    expect(repair({}).enabled).toBe(false);
    expect(repair({ FEATURE_GATES: 'NodeRepair=true' }).enabled).toBe(true);
    expect(
      repair({}).policies.map((p) => `${p.conditionType}=${p.conditionStatus}:${p.tolerationMs}`),
    ).toEqual([
      'Ready=False:600000',
      'Ready=Unknown:600000',
      'kubernetes.azure.com/NodeHealthy=False:0',
      'PreemptionScheduled=True:0',
    ]);
  });

  it('reads REPAIR_POLICIES and names a bad entry', () => {
    const policies = repair({
      REPAIR_POLICIES: 'Ready=Unknown/NodeStatusUnknown:20s:reboot,Foo=True:0s',
    }).policies;
    expect(policies).toEqual([
      {
        conditionType: 'Ready',
        conditionStatus: 'Unknown',
        conditionReason: 'NodeStatusUnknown',
        tolerationMs: 20_000,
        action: 'reboot',
      },
      { conditionType: 'Foo', conditionStatus: 'True', tolerationMs: 0, action: 'replace' },
    ]);
    expect(() => repair({ REPAIR_POLICIES: 'Ready=Maybe:10m' })).toThrow(
      /REPAIR_POLICIES has "Ready=Maybe:10m": status must be True, False or Unknown/,
    );
    expect(() => repair({ REPAIR_POLICIES: 'Ready=False:soon' })).toThrow(
      /REPAIR_POLICIES has "Ready=False:soon"/,
    );
    expect(() => repair({ REPAIR_MAX_REBOOTS: '-1' })).toThrow(/REPAIR_MAX_REBOOTS/);
  });
});
