// Upstream's and the Azure provider's setting names are read, and the names this app used before still
// work as aliases: VNET_SUBNET_ID / AZURE_SUBNET_ID, LOCATION / AZURE_LOCATION, SSH_PUBLIC_KEY /
// NODE_SSH_PUBLIC_KEY, CLUSTER_ENDPOINT / KUBE_API_SERVER_URL, LINUX_ADMIN_USERNAME / NODE_ADMIN_USERNAME,
// FEATURE_GATES=SpotToSpotConsolidation=… / SPOT_TO_SPOT_CONSOLIDATION. Conflicts are named. The former
// AZURE_RESOURCE_GROUP alias is azd's own variable, so it is no longer read; upstream settings the app
// implements only at their default are refused at any other value, never silently ignored.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { capacityOptions } from '../../shared/cloudprovider/vm-body.js';
import { capacityFor } from '../../shared/decisions/offerings.js';
import type { AKSNodeClass } from '../../shared/models/index.js';
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

describe('settings carried over from Karpenter and its Azure provider', () => {
  const withoutNodeGroup = (): Record<string, string> => {
    const { AZURE_NODE_RESOURCE_GROUP: _group, ...env } = example;
    return env;
  };

  it("no longer reads AZURE_RESOURCE_GROUP (azd's variable) as the node resource group, and says what to set", () => {
    expect(() => loadSettings({ ...withoutNodeGroup(), AZURE_RESOURCE_GROUP: 'MC_nodes' })).toThrow(
      /AZURE_NODE_RESOURCE_GROUP is missing; AZURE_RESOURCE_GROUP is set, but is no longer read as AZURE_NODE_RESOURCE_GROUP \(azd uses that name for the app's own resource group\)/,
    );
    expect(() => loadSettings(withoutNodeGroup())).toThrow(/AZURE_NODE_RESOURCE_GROUP is missing: set it/);
    // Beside the setting it is azd's, and changes nothing.
    const settings = loadSettings({ ...example, AZURE_RESOURCE_GROUP: 'app-rg' });
    expect(settings.azure.resourceGroup).toBe(example['AZURE_NODE_RESOURCE_GROUP']);
  });

  it("LINUX_ADMIN_USERNAME names the VMs' admin user; NODE_ADMIN_USERNAME is its alias", () => {
    expect(loadSettings(example).azure.adminUsername).toBe('azureuser');
    expect(loadSettings({ ...example, LINUX_ADMIN_USERNAME: 'ops' }).azure.adminUsername).toBe('ops');
    expect(loadSettings({ ...example, NODE_ADMIN_USERNAME: 'ops' }).azure.adminUsername).toBe('ops');
    expect(() =>
      loadSettings({ ...example, LINUX_ADMIN_USERNAME: 'ops', NODE_ADMIN_USERNAME: 'admin2' }),
    ).toThrow(/LINUX_ADMIN_USERNAME and its alias NODE_ADMIN_USERNAME are set to different values/);
    expect(() => loadSettings({ ...example, LINUX_ADMIN_USERNAME: 'bad user' })).toThrow(
      /LINUX_ADMIN_USERNAME is "bad user": expected a Linux user name/,
    );
  });

  it("VM_MEMORY_OVERHEAD_PERCENT is the share of memory every instance type's capacity loses (default 0.075)", () => {
    const fraction = (env: Record<string, string>) =>
      loadSettings({ ...example, ...env }).cluster.vmMemoryOverheadFraction;
    expect(fraction({})).toBe(0.075);
    expect(fraction({ VM_MEMORY_OVERHEAD_PERCENT: '0.1' })).toBe(0.1);
    expect(() => fraction({ VM_MEMORY_OVERHEAD_PERCENT: '7.5' })).toThrow(
      /VM_MEMORY_OVERHEAD_PERCENT is "7.5": expected a number from 0 to 0.5/,
    );
    const size = { cpu: 4, memoryMiB: 16_384, nvidiaGpus: 0 };
    expect(capacityFor(size).capacity.memory).toBe(`${16_384 * 1024 - Math.ceil(16_384 * 1024 * 0.075)}Ki`);
    expect(capacityFor(size, { vmMemoryOverheadFraction: 0.1 }).capacity.memory).toBe(
      `${16_384 * 1024 - Math.ceil(16_384 * 1024 * 0.1)}Ki`,
    );
    expect(capacityFor(size, { vmMemoryOverheadFraction: 0 }).capacity.memory).toBe(`${16_384 * 1024}Ki`);
    // The setting reaches every capacity the app computes through capacityOptions (launch, scheduling,
    // consolidation, the NodeClaim status); at the default it is left out, as before the setting.
    const nodeClass: AKSNodeClass = {
      apiVersion: 'karpenter.azure.com/v1beta1',
      kind: 'AKSNodeClass',
      metadata: { name: 'default' },
      spec: {},
    };
    const options = (env: Record<string, string>) =>
      capacityOptions(loadSettings({ ...example, ...env }), nodeClass);
    expect(options({ VM_MEMORY_OVERHEAD_PERCENT: '0.1' }).vmMemoryOverheadFraction).toBe(0.1);
    expect(options({})).not.toHaveProperty('vmMemoryOverheadFraction');
  });

  it("reads PREFERENCE_POLICY and MIN_VALUES_POLICY by upstream's values, at upstream's defaults when unset", () => {
    expect(loadSettings(example).scheduling).toEqual({
      preferencePolicy: 'Respect',
      minValuesPolicy: 'Strict',
    });
    expect(
      loadSettings({ ...example, PREFERENCE_POLICY: 'Ignore', MIN_VALUES_POLICY: 'BestEffort' }).scheduling,
    ).toEqual({ preferencePolicy: 'Ignore', minValuesPolicy: 'BestEffort' });
    expect(
      loadSettings({ ...example, PREFERENCE_POLICY: 'Respect', MIN_VALUES_POLICY: 'Strict' }).scheduling,
    ).toEqual({ preferencePolicy: 'Respect', minValuesPolicy: 'Strict' });
    expect(() => loadSettings({ ...example, PREFERENCE_POLICY: 'ignore' })).toThrow(
      /PREFERENCE_POLICY is "ignore": expected one of "Respect", "Ignore"/,
    );
    expect(() => loadSettings({ ...example, MIN_VALUES_POLICY: 'strict' })).toThrow(
      /MIN_VALUES_POLICY is "strict": expected one of "Strict", "BestEffort"/,
    );
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
