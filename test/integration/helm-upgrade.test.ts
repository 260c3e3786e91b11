// A cluster installed with an earlier chart must upgrade in place for years, as Karpenter's does: this
// installs the previous release (test/fixtures/charts/nodeclaim-azure-0.1.0.tgz, packaged from the chart
// as it was, CRDs in crds/), creates a NodePool and a NodeClaim, upgrades to this checkout's chart and
// uninstalls it, on the shared control plane. It asserts that the CRDs become the release's (labelled with
// this chart's version and kept on uninstall), that the objects stored under them are untouched (uid,
// resourceVersion, generation, spec), and that no object of either version outlives what Helm says the
// release holds. The NodePool and NodeClaim name a node class of another provider, so no sweep of the
// other tests sharing the server acts on them.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  ApiException,
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  KubernetesObjectApi,
  PolicyV1Api,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { NodeClaimResource, NodePoolResource, apiVersionOf } from '../../shared/kube/crd-names.js';
import { CHART_DIRECTORY, ensureHelm, runHelm } from '../../scripts/helm/helm.js';

const root = join(import.meta.dirname, '..', '..');
const previousChart = join(root, 'test', 'fixtures', 'charts', 'nodeclaim-azure-0.1.0.tgz');
const headVersion = (parse(readFileSync(join(CHART_DIRECTORY, 'Chart.yaml'), 'utf8')) as { version: string })
  .version;
const suffix = randomBytes(3).toString('hex');
const release = `upgrade-${suffix}`;
const namespace = `upgrade-${suffix}`;
const nodePoolName = `upgrade-${suffix}`;
const nodeClaimName = `upgrade-${suffix}`;
const crdNames = [
  'aksnodeclasses.karpenter.azure.com',
  'capacitybuffers.autoscaling.x-k8s.io',
  'nodeclaims.karpenter.sh',
  'nodeoverlays.karpenter.sh',
  'nodepools.karpenter.sh',
];
// Another provider's class: isManagedNodeClaim is false, so no sweep of a concurrent test touches these.
const nodeClassRef = { group: 'upgrade-test.example.com', kind: 'UpgradeTestNodeClass', name: 'test' };

const values = [
  '--set',
  'settings.clusterName=upgrade',
  '--set',
  'settings.queueServiceUrl=https://unused.queue.core.windows.net',
  '--set',
  `functions.principalId=upgrade-functions-${suffix}`,
  // No container runtime here: the Deployment exists but runs no pod.
  '--set',
  'replicas=0',
];

const kubeConfig = new KubeConfig();
let kubeconfigPath: string;
let objects: KubernetesObjectApi;
let custom: CustomObjectsApi;

interface Stored extends KubernetesObject {
  spec?: unknown;
}

/** kind/namespace/name of every object in a release's manifest, with its apiVersion. */
interface Identity {
  apiVersion: string;
  kind: string;
  namespace: string | undefined;
  name: string;
}

const keyOf = (o: Identity): string => `${o.kind}/${o.namespace ?? ''}/${o.name}`;

async function manifest(revision: number): Promise<Identity[]> {
  const text = await runHelm([
    'get',
    'manifest',
    release,
    '--namespace',
    namespace,
    '--revision',
    String(revision),
    '--kubeconfig',
    kubeconfigPath,
  ]);
  return parseAllDocuments(text)
    .map((d) => d.toJS() as KubernetesObject | null)
    .filter((o): o is KubernetesObject => o !== null && o.kind !== undefined)
    .map((o) => ({
      apiVersion: o.apiVersion ?? '',
      kind: o.kind ?? '',
      // helm get manifest leaves namespaced objects of the release namespace without one.
      namespace: o.metadata?.namespace,
      name: o.metadata?.name ?? '',
    }));
}

async function exists(identity: Identity): Promise<boolean> {
  try {
    await objects.read({
      apiVersion: identity.apiVersion,
      kind: identity.kind,
      metadata: {
        name: identity.name,
        ...(identity.namespace ? { namespace: identity.namespace } : {}),
      },
    });
    return true;
  } catch (error) {
    if (error instanceof ApiException && error.code === 404) return false;
    throw error;
  }
}

/** Every live object of the kinds `identities` has that carries this release's instance label. */
async function labelled(identities: readonly Identity[]): Promise<string[]> {
  const kinds = new Map(identities.map((o) => [o.kind, o.apiVersion]));
  const found: string[] = [];
  for (const [kind, apiVersion] of kinds) {
    const list = await objects.list(
      apiVersion,
      kind,
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
      `app.kubernetes.io/instance=${release}`,
    );
    for (const item of list.items) {
      // The Deployment's ReplicaSets and pods carry its template's labels; they are not the chart's.
      if (item.metadata?.ownerReferences?.length) continue;
      found.push(
        keyOf({ apiVersion, kind, namespace: item.metadata?.namespace, name: item.metadata?.name ?? '' }),
      );
    }
  }
  return found.sort();
}

/** The manifest's identities with the release namespace filled in, as the API server reports them. */
function placed(identities: readonly Identity[], namespaced: ReadonlySet<string>): string[] {
  return identities
    .map((o) => keyOf({ ...o, namespace: o.namespace ?? (namespaced.has(o.kind) ? namespace : undefined) }))
    .sort();
}

async function readCrd(name: string): Promise<KubernetesObject> {
  return objects.read({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name },
  });
}

async function readStored(resource: typeof NodeClaimResource | typeof NodePoolResource, name: string) {
  return (await custom.getClusterCustomObject({
    group: resource.group,
    version: resource.version,
    plural: resource.plural,
    name,
  })) as Stored;
}

function fingerprint(object: Stored) {
  return {
    uid: object.metadata?.uid,
    resourceVersion: object.metadata?.resourceVersion,
    generation: object.metadata?.generation,
    creationTimestamp: String(object.metadata?.creationTimestamp),
    spec: object.spec,
  };
}

const helm = (...args: string[]) =>
  runHelm([...args, '--namespace', namespace, '--kubeconfig', kubeconfigPath]);

let before: { nodePool: ReturnType<typeof fingerprint>; nodeClaim: ReturnType<typeof fingerprint> };
const namespacedKinds = new Set([
  'ConfigMap',
  'ServiceAccount',
  'Deployment',
  'Role',
  'RoleBinding',
  'PodDisruptionBudget',
]);

beforeAll(async () => {
  kubeconfigPath = inject('kubeconfigPath');
  kubeConfig.loadFromFile(kubeconfigPath);
  objects = KubernetesObjectApi.makeApiClient(kubeConfig);
  custom = kubeConfig.makeApiClient(CustomObjectsApi);
  await ensureHelm();
}, 600_000);

afterAll(async () => {
  await helm('uninstall', release).catch(() => undefined);
  for (const [resource, name] of [
    [NodeClaimResource, nodeClaimName],
    [NodePoolResource, nodePoolName],
  ] as const) {
    await custom
      .deleteClusterCustomObject({
        group: resource.group,
        version: resource.version,
        plural: resource.plural,
        name,
      })
      .catch(() => undefined);
  }
  await kubeConfig
    .makeApiClient(CoreV1Api)
    .deleteNamespace({ name: namespace })
    .catch(() => undefined);
});

describe('helm upgrade from the previous chart', () => {
  it(
    'installs 0.1.0 and stores a NodePool and a NodeClaim under its CRDs',
    { timeout: 120_000 },
    async () => {
      expect(headVersion, 'the fixture is the previous version, not this one').not.toBe('0.1.0');
      await helm(
        'install',
        release,
        previousChart,
        '--create-namespace',
        '--wait',
        '--timeout',
        '90s',
        ...values,
      );
      expect(
        await helm('status', release, '-o', 'json').then((s) => JSON.parse(s) as { version: number }),
      ).toMatchObject({ version: 1, info: { status: 'deployed' } });
      // 0.1.0's CRDs were in crds/: installed if absent, never the release's.
      for (const name of crdNames) {
        expect((await readCrd(name)).metadata?.labels?.['helm.sh/chart'], name).not.toBe(
          `nodeclaim-azure-${headVersion}`,
        );
      }
      await custom.createClusterCustomObject({
        group: NodePoolResource.group,
        version: NodePoolResource.version,
        plural: NodePoolResource.plural,
        body: {
          apiVersion: apiVersionOf(NodePoolResource),
          kind: 'NodePool',
          metadata: { name: nodePoolName },
          spec: {
            template: {
              spec: {
                nodeClassRef,
                requirements: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }],
              },
            },
          },
        },
      });
      await custom.createClusterCustomObject({
        group: NodeClaimResource.group,
        version: NodeClaimResource.version,
        plural: NodeClaimResource.plural,
        body: {
          apiVersion: apiVersionOf(NodeClaimResource),
          kind: 'NodeClaim',
          metadata: { name: nodeClaimName, labels: { 'karpenter.sh/nodepool': nodePoolName } },
          spec: {
            nodeClassRef,
            requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['test'] }],
            resources: { requests: { cpu: '1', memory: '1Gi' } },
          },
        },
      });
      before = {
        nodePool: fingerprint(await readStored(NodePoolResource, nodePoolName)),
        nodeClaim: fingerprint(await readStored(NodeClaimResource, nodeClaimName)),
      };
      expect(before.nodeClaim.uid).toBeTruthy();
    },
  );

  it('refuses the upgrade without --take-ownership and changes nothing', { timeout: 60_000 }, async () => {
    await expect(
      helm('upgrade', release, CHART_DIRECTORY, '--reset-then-reuse-values', '--wait', '--timeout', '90s'),
    ).rejects.toThrow(/invalid ownership metadata|cannot be imported/);
    const pdbs = await kubeConfig.makeApiClient(PolicyV1Api).listNamespacedPodDisruptionBudget({ namespace });
    expect(pdbs.items).toEqual([]);
    expect(
      (await readCrd('nodeclaims.karpenter.sh')).metadata?.annotations?.['meta.helm.sh/release-name'],
    ).not.toBe(release);
  });

  it(
    'upgrades with --take-ownership: the CRDs become the release, the stored objects stay as they were',
    { timeout: 120_000 },
    async () => {
      const previous = await manifest(1);
      // As the chart's README tells an operator: the install's values, this chart's defaults for new keys.
      await helm(
        'upgrade',
        release,
        CHART_DIRECTORY,
        '--reset-then-reuse-values',
        '--take-ownership',
        '--wait',
        '--timeout',
        '90s',
      );
      const history = JSON.parse(await helm('history', release, '-o', 'json')) as {
        revision: number;
        status: string;
        chart: string;
        app_version: string;
      }[];
      const status = { version: history.at(-1)?.revision ?? 0 };
      // The last revision is this chart, deployed (after the refused attempt's, if Helm recorded one).
      expect(history.at(-1)).toMatchObject({
        status: 'deployed',
        chart: `nodeclaim-azure-${headVersion}`,
        app_version: headVersion,
      });
      // The values the install was given are still the release's.
      expect(JSON.parse(await helm('get', 'values', release, '-o', 'json'))).toMatchObject({
        replicas: 0,
        settings: { clusterName: 'upgrade' },
      });
      const current = await manifest(status.version);

      for (const name of crdNames) {
        const crd = await readCrd(name);
        expect(crd.metadata?.labels, name).toMatchObject({
          'helm.sh/chart': `nodeclaim-azure-${headVersion}`,
          'app.kubernetes.io/managed-by': 'Helm',
          'app.kubernetes.io/instance': release,
        });
        expect(crd.metadata?.annotations, name).toMatchObject({
          'meta.helm.sh/release-name': release,
          'meta.helm.sh/release-namespace': namespace,
          'helm.sh/resource-policy': 'keep',
        });
      }
      expect(
        current
          .filter((o) => o.kind === 'CustomResourceDefinition')
          .map((o) => o.name)
          .sort(),
      ).toEqual(crdNames);

      // Untouched: not rewritten, not re-created.
      expect(fingerprint(await readStored(NodePoolResource, nodePoolName))).toEqual(before.nodePool);
      expect(fingerprint(await readStored(NodeClaimResource, nodeClaimName))).toEqual(before.nodeClaim);

      // The new objects are there (the bridge's PodDisruptionBudget), the Deployment rolled to this version.
      const pdb = await kubeConfig
        .makeApiClient(PolicyV1Api)
        .readNamespacedPodDisruptionBudget({ name: `${release}-nodeclaim-azure-event-bridge`, namespace });
      expect(pdb.spec?.maxUnavailable).toBe(1);
      const deployment = await kubeConfig
        .makeApiClient(AppsV1Api)
        .readNamespacedDeployment({ name: `${release}-nodeclaim-azure-event-bridge`, namespace });
      expect(deployment.metadata?.labels?.['helm.sh/chart']).toBe(`nodeclaim-azure-${headVersion}`);

      // Nothing leaked: what 0.1.0 shipped and this version does not is gone, and every object labelled
      // as the release's is one this version's manifest names.
      const currentKeys = new Set(current.map(keyOf));
      for (const object of previous.filter((o) => !currentKeys.has(keyOf(o)))) {
        expect(await exists(object), keyOf(object)).toBe(false);
      }
      for (const object of current) expect(await exists(object), keyOf(object)).toBe(true);
      expect(await labelled([...previous, ...current])).toEqual(placed(current, namespacedKinds));
    },
  );

  it('uninstalls everything but the CRDs, and the stored objects stay', { timeout: 120_000 }, async () => {
    const current = await manifest(
      (JSON.parse(await helm('status', release, '-o', 'json')) as { version: number }).version,
    );
    const output = await helm('uninstall', release, '--wait', '--timeout', '90s');
    expect(output).toMatch(/resource-policy|kept/i);
    for (const object of current) {
      expect(await exists(object), keyOf(object)).toBe(object.kind === 'CustomResourceDefinition');
    }
    expect(await labelled(current)).toEqual(crdNames.map((name) => `CustomResourceDefinition//${name}`));
    expect(fingerprint(await readStored(NodePoolResource, nodePoolName))).toEqual(before.nodePool);
    expect(fingerprint(await readStored(NodeClaimResource, nodeClaimName))).toEqual(before.nodeClaim);
  });
});
