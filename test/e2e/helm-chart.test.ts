// The Helm chart on the test control plane: rendered by Helm (built from its Go module, scripts/helm) it
// carries exactly the RBAC rules and CRDs of infra/k8s (the CRDs as templates that upgrade and are kept on
// uninstall), bounds the bridge by a PodDisruptionBudget, pins its image by digest on request, keeps the
// bridge off managed nodes and out of system-cluster-critical outside kube-system; `helm install` puts it on the real API server, and the
// bridge, run as the chart's ServiceAccount with a token the API server issued for it, publishes.
// The bridge image cannot run here (no container runtime), so the chart's Deployment is installed with 0
// replicas and the bridge runs as a process (bridge/main.ts) with the installed ConfigMap's settings;
// workload identity cannot run here either, so it sends to Azurite with a connection string instead of
// the chart's queue service URL.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { QueueClient } from '@azure/storage-queue';
import {
  AdmissionregistrationV1Api,
  AppsV1Api,
  AuthorizationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { parseObjectChangeEvent } from '../../shared/events/cloud-event.js';
import { NodeClaimResource } from '../../shared/kube/crd-names.js';
import { chartSources, expectedCopy } from '../../scripts/chart/sync.js';
import { CHART_DIRECTORY, ensureHelm, runHelm } from '../../scripts/helm/helm.js';

const root = join(import.meta.dirname, '..', '..');
const run = promisify(execFile);
const chartVersion = /^version:\s*(\S+)$/m.exec(
  readFileSync(join(CHART_DIRECTORY, 'Chart.yaml'), 'utf8'),
)?.[1];
const suffix = randomBytes(3).toString('hex');
const release = `chart-${suffix}`;
const namespace = `chart-${suffix}`;
const principal = `chart-functions-${suffix}`;
const queueName = `chart-events-${suffix}`;

interface RbacObject extends KubernetesObject {
  rules?: unknown[];
  roleRef?: { name: string; kind: string };
  subjects?: { kind: string; name: string; namespace?: string }[];
  spec?: Record<string, unknown>;
}

const kubeConfig = new KubeConfig();
let kubeconfigPath: string;
let workDirectory: string;
let rendered: RbacObject[] = [];

function manifest(file: string): RbacObject[] {
  return parseAllDocuments(readFileSync(join(root, file), 'utf8')).map((d) => d.toJS() as RbacObject);
}

function renderedOf(kind: string, name: string): RbacObject {
  const found = rendered.find((o) => o.kind === kind && o.metadata?.name === name);
  if (!found) throw new Error(`the chart rendered no ${kind} ${name}`);
  return found;
}

const values = [
  '--set',
  `settings.clusterName=integration`,
  '--set',
  `settings.queueName=${queueName}`,
  '--set',
  'settings.queueServiceUrl=https://unused.queue.core.windows.net',
  '--set',
  `functions.principalId=${principal}`,
];

beforeAll(async () => {
  kubeconfigPath = inject('kubeconfigPath');
  kubeConfig.loadFromFile(kubeconfigPath);
  workDirectory = mkdtempSync(join(tmpdir(), 'helm-chart-test-'));
  await ensureHelm();
  const output = await runHelm(['template', release, CHART_DIRECTORY, '--namespace', namespace, ...values]);
  rendered = parseAllDocuments(output)
    .map((d) => d.toJS() as RbacObject | null)
    .filter((o): o is RbacObject => o !== null);
}, 600_000);

afterAll(async () => {
  await runHelm(['uninstall', release, '--namespace', namespace, '--kubeconfig', kubeconfigPath]).catch(
    () => undefined,
  );
  await kubeConfig
    .makeApiClient(CoreV1Api)
    .deleteNamespace({ name: namespace })
    .catch(() => undefined);
  rmSync(workDirectory, { recursive: true, force: true });
});

describe('the rendered chart', () => {
  it('grants exactly the rules of the infra/k8s manifests', () => {
    const sources: [string, string, string][] = [
      [
        'infra/k8s/bridge/clusterrole.yaml',
        'nodeclaim-event-bridge',
        `${release}-nodeclaim-azure-event-bridge`,
      ],
      ['infra/k8s/functions/clusterrole.yaml', 'nodeclaim-functions', `${release}-nodeclaim-azure-functions`],
      [
        'infra/k8s/functions/lease-role.yaml',
        'nodeclaim-functions-sweep-lease',
        `${release}-nodeclaim-azure-functions-sweep-lease`,
      ],
      [
        'infra/k8s/functions/bootstrap-token-role.yaml',
        'nodeclaim-functions-bootstrap-tokens',
        `${release}-nodeclaim-azure-functions-bootstrap-tokens`,
      ],
    ];
    for (const [file, sourceName, chartName] of sources) {
      const source = manifest(file).find((o) => o.metadata?.name === sourceName);
      const kind = source?.kind ?? '';
      expect(renderedOf(kind, chartName).rules, file).toEqual(source?.rules);
      expect(renderedOf(`${kind}Binding`, chartName).subjects?.map((s) => s.name)).toEqual([
        kind === 'ClusterRole' && sourceName.includes('bridge') ? 'event-bridge' : principal,
      ]);
    }
    for (const binding of manifest('infra/k8s/functions/node-bootstrap.yaml')) {
      const name = `${release}-nodeclaim-azure-${(binding.metadata?.name ?? '').replace('nodeclaim-azure-', '')}`;
      expect(renderedOf('ClusterRoleBinding', name)).toMatchObject({
        roleRef: binding.roleRef,
        subjects: binding.subjects,
      });
    }
  });

  it('carries the CRDs of infra/k8s/crds, with the chart labels and kept on uninstall', async () => {
    const crds = rendered.filter((o) => o.kind === 'CustomResourceDefinition');
    const expected = readdirSync(join(root, 'infra/k8s/crds'))
      .filter((file) => file.endsWith('.yaml'))
      .map((file) => manifest(`infra/k8s/crds/${file}`).find((o) => o?.kind === 'CustomResourceDefinition'));
    expect(expected.length).toBeGreaterThanOrEqual(5);
    expect(crds.map((o) => o.metadata?.name).sort()).toEqual(expected.map((o) => o?.metadata?.name).sort());
    for (const source of expected) {
      const crd = crds.find((o) => o.metadata?.name === source?.metadata?.name);
      // Everything but metadata exactly as infra/k8s has it: the spec text is never re-serialised.
      expect({ ...crd, metadata: undefined }).toEqual({ ...source, metadata: undefined });
      expect(crd?.metadata?.annotations).toEqual({
        ...source?.metadata?.annotations,
        'helm.sh/resource-policy': 'keep',
      });
      expect(crd?.metadata?.labels).toMatchObject({
        'helm.sh/chart': `nodeclaim-azure-${chartVersion}`,
        'app.kubernetes.io/managed-by': 'Helm',
      });
    }
    const notKept = await runHelm([
      'template',
      release,
      CHART_DIRECTORY,
      ...values,
      '--set',
      'crds.keep=false',
    ]);
    expect(notKept).toContain('kind: CustomResourceDefinition');
    expect(notKept).not.toContain('helm.sh/resource-policy');
    const notInstalled = await runHelm([
      'template',
      release,
      CHART_DIRECTORY,
      ...values,
      '--set',
      'crds.install=false',
    ]);
    expect(notInstalled).not.toContain('kind: CustomResourceDefinition');
  });

  it('bounds the bridge by a PodDisruptionBudget over its own pods, maxUnavailable 1 by default', async () => {
    const name = `${release}-nodeclaim-azure-event-bridge`;
    const deployment = renderedOf('Deployment', name) as RbacObject & {
      spec: { selector: { matchLabels: Record<string, string> } };
    };
    expect(renderedOf('PodDisruptionBudget', name).spec).toEqual({
      maxUnavailable: 1,
      selector: { matchLabels: deployment.spec.selector.matchLabels },
    });
    const pdbOf = async (...set: string[]) =>
      parseAllDocuments(
        await runHelm(['template', release, CHART_DIRECTORY, ...values, ...set.flatMap((s) => ['--set', s])]),
      )
        .map((d) => d.toJS() as RbacObject | null)
        .find((o) => o?.kind === 'PodDisruptionBudget');
    expect((await pdbOf('replicas=3', 'podDisruptionBudget.minAvailable=2'))?.spec).toMatchObject({
      minAvailable: 2,
    });
    expect((await pdbOf('podDisruptionBudget.minAvailable=2'))?.spec?.['maxUnavailable']).toBeUndefined();
    expect(await pdbOf('podDisruptionBudget.enabled=false')).toBeUndefined();
    await expect(pdbOf('podDisruptionBudget.maxUnavailable=null')).rejects.toThrow(
      /needs podDisruptionBudget\.maxUnavailable or podDisruptionBudget\.minAvailable/,
    );
  });

  it('runs the image bridge/Dockerfile builds, tagged with the appVersion or pinned by digest', async () => {
    const imageOf = async (...set: string[]) => {
      const output = await runHelm([
        'template',
        release,
        CHART_DIRECTORY,
        ...values,
        ...set.flatMap((s) => ['--set', s]),
      ]);
      const deployment = parseAllDocuments(output)
        .map((d) => d.toJS() as RbacObject | null)
        .find((o) => o?.kind === 'Deployment') as
        (RbacObject & { spec: { template: { spec: { containers: { image: string }[] } } } }) | undefined;
      return deployment?.spec.template.spec.containers[0]?.image;
    };
    expect(await imageOf()).toBe(`nodeclaim-event-bridge:${chartVersion}`);
    expect(await imageOf('controller.image.repository=example.azurecr.io/nodeclaim-event-bridge')).toBe(
      `example.azurecr.io/nodeclaim-event-bridge:${chartVersion}`,
    );
    const digest = `sha256:${'0123456789abcdef'.repeat(4)}`;
    expect(
      await imageOf(
        'controller.image.repository=example.azurecr.io/nodeclaim-event-bridge',
        'controller.image.tag=ignored',
        `controller.image.digest=${digest}`,
      ),
    ).toBe(`example.azurecr.io/nodeclaim-event-bridge@${digest}`);
  });

  it('keeps the bridge off managed nodes, with no system-cluster-critical outside kube-system', async () => {
    const deployment = renderedOf('Deployment', `${release}-nodeclaim-azure-event-bridge`) as RbacObject & {
      spec: { template: { spec: Record<string, unknown> } };
    };
    const pod = deployment.spec.template.spec;
    expect(pod['affinity']).toEqual({
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [
            { matchExpressions: [{ key: 'karpenter.sh/nodepool', operator: 'DoesNotExist' }] },
          ],
        },
      },
    });
    expect(pod['priorityClassName']).toBeUndefined();
    const inKubeSystem = await runHelm([
      'template',
      release,
      CHART_DIRECTORY,
      '--namespace',
      'kube-system',
      ...values,
    ]);
    expect(inKubeSystem).toContain('priorityClassName: system-cluster-critical');
  });

  it('refuses to render without the values an install needs, naming them', async () => {
    const without = (name: string) =>
      values.filter((_, i) => values[i + 1]?.startsWith(name) !== true && !values[i]?.startsWith(name));
    await expect(
      runHelm(['template', release, CHART_DIRECTORY, ...without('settings.clusterName=')]),
    ).rejects.toThrow(/settings\.clusterName is required/);
    await expect(
      runHelm(['template', release, CHART_DIRECTORY, ...without('functions.principalId=')]),
    ).rejects.toThrow(/functions\.principalId is required/);
    // Under Azure RBAC the functions' roles are granted in Azure: no principal needed, no binding rendered.
    const azureRbac = await runHelm([
      'template',
      release,
      CHART_DIRECTORY,
      ...without('functions.principalId='),
      '--set',
      'functions.kubernetesRbac=false',
    ]);
    expect(azureRbac).not.toContain('kind: User');
  });

  it('packages the copied files as they are, so the OCI artifact renders the same', async () => {
    await runHelm(['package', CHART_DIRECTORY, '--destination', workDirectory]);
    const archive = join(workDirectory, `nodeclaim-azure-${chartVersion}.tgz`);
    // The packed copies are the sources' text (and no file of the archive is a link).
    const unpacked = join(workDirectory, 'unpacked');
    mkdirSync(unpacked);
    await run('tar', ['-xzf', archive, '-C', unpacked]);
    for (const { source, target } of chartSources()) {
      const packed = join(unpacked, target.replace('charts/', ''));
      expect(lstatSync(packed).isFile(), target).toBe(true);
      expect(readFileSync(packed, 'utf8'), target).toBe(expectedCopy(root, source));
    }
    const fromArchive = await runHelm(['template', release, archive, '--namespace', namespace, ...values]);
    const fromDirectory = await runHelm([
      'template',
      release,
      CHART_DIRECTORY,
      '--namespace',
      namespace,
      ...values,
    ]);
    expect(fromArchive).toBe(fromDirectory);
    expect(fromArchive).toContain('kind: CustomResourceDefinition');
  });
});

describe('helm install on the test control plane', () => {
  let bridge: ChildProcess | undefined;
  const lines: Record<string, unknown>[] = [];

  afterAll(() => {
    if (bridge && bridge.exitCode === null) bridge.kill('SIGKILL');
  });

  it('installs, and the bridge publishes as the chart ServiceAccount', { timeout: 180_000 }, async () => {
    await runHelm([
      'install',
      release,
      CHART_DIRECTORY,
      '--namespace',
      namespace,
      '--create-namespace',
      '--kubeconfig',
      kubeconfigPath,
      '--wait',
      '--timeout',
      '120s',
      ...values,
      // No container runtime here: the Deployment exists but runs nothing; the bridge runs as a process.
      '--set',
      'replicas=0',
      // The shared control plane was started with the CRDs; helm-upgrade.test.ts installs them by the chart.
      '--set',
      'crds.install=false',
    ]);
    const core = kubeConfig.makeApiClient(CoreV1Api);
    const deployment = await kubeConfig
      .makeApiClient(AppsV1Api)
      .readNamespacedDeployment({ name: `${release}-nodeclaim-azure-event-bridge`, namespace });
    expect(deployment.spec?.template.spec?.serviceAccountName).toBe('event-bridge');

    // The functions' identity got the chart's bindings: the API server's own authorizer says so.
    const authorization = kubeConfig.makeApiClient(AuthorizationV1Api);
    const can = async (attributes: Record<string, string>) =>
      (
        await authorization.createSubjectAccessReview({
          body: { spec: { user: principal, resourceAttributes: { version: '*', ...attributes } } },
        })
      ).status?.allowed;
    expect(
      await can({ group: 'karpenter.sh', resource: 'nodeclaims', subresource: 'status', verb: 'patch' }),
    ).toBe(true);
    // The sweep Lease in the release namespace (the Function App's SYSTEM_NAMESPACE), never kube-system.
    const sweepLease = {
      group: 'coordination.k8s.io',
      resource: 'leases',
      verb: 'update',
      name: 'nodeclaim-azure-sweep',
    };
    expect(await can({ ...sweepLease, namespace })).toBe(true);
    expect(await can({ ...sweepLease, namespace: 'kube-system' })).toBe(false);
    expect(await can({ group: '', resource: 'secrets', verb: 'list', namespace: 'default' })).toBe(false);
    // Bootstrap tokens: created and deleted, never read; the chart's admission policy holds the rest.
    expect(await can({ group: '', resource: 'secrets', verb: 'create', namespace: 'kube-system' })).toBe(
      true,
    );
    expect(await can({ group: '', resource: 'secrets', verb: 'get', namespace: 'kube-system' })).toBe(false);
    const policies = await kubeConfig
      .makeApiClient(AdmissionregistrationV1Api)
      .listValidatingAdmissionPolicy();
    const policy = policies.items.find(
      (p) => p.metadata?.name === `${release}-nodeclaim-azure-functions-bootstrap-tokens`,
    );
    expect(policy?.spec?.matchConditions?.[0]?.expression).toBe(
      `request.userInfo.username == '${principal}'`,
    );

    // A token the API server issues for the chart's ServiceAccount: the bridge is that identity, no more.
    const token = await core.createNamespacedServiceAccountToken({
      name: 'event-bridge',
      namespace,
      body: { spec: { expirationSeconds: 3600, audiences: [] } },
    });
    const cluster = kubeConfig.getCurrentCluster();
    if (!cluster || !token.status?.token) throw new Error('no cluster or no token');
    const serviceAccountConfig = join(workDirectory, 'service-account.kubeconfig');
    writeFileSync(
      serviceAccountConfig,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [
          {
            name: 'test',
            cluster: {
              server: cluster.server,
              'certificate-authority-data': cluster.caData ?? '',
              ...(cluster.caFile ? { 'certificate-authority': cluster.caFile } : {}),
            },
          },
        ],
        users: [{ name: 'event-bridge', user: { token: token.status.token } }],
        contexts: [{ name: 'test', context: { cluster: 'test', user: 'event-bridge' } }],
        'current-context': 'test',
      }),
    );

    const settings = await core.readNamespacedConfigMap({
      name: `${release}-nodeclaim-azure-event-bridge`,
      namespace,
    });
    const { BRIDGE_QUEUE_SERVICE_URL: _workloadIdentityOnly, ...fromChart } = settings.data ?? {};
    const connectionString = inject('azuriteConnectionString');
    const queue = new QueueClient(connectionString, queueName);
    await queue.createIfNotExists();
    const { KUBERNETES_SERVICE_HOST: _inCluster, ...inherited } = process.env;
    bridge = spawn(process.execPath, ['--import', 'tsx', 'bridge/main.ts'], {
      cwd: root,
      env: {
        ...inherited,
        ...fromChart,
        BRIDGE_STORAGE_CONNECTION_STRING: connectionString,
        KUBECONFIG: serviceAccountConfig,
        BRIDGE_HEALTH_PORT: '0',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let partial = '';
    bridge.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      partial += chunk;
      const complete = partial.split('\n');
      partial = complete.pop() ?? '';
      for (const line of complete)
        if (line.startsWith('{')) lines.push(JSON.parse(line) as Record<string, unknown>);
    });

    const name = `chart-${suffix}`;
    await kubeConfig.makeApiClient(CustomObjectsApi).createClusterCustomObject({
      ...NodeClaimResource,
      body: {
        apiVersion: 'karpenter.sh/v1',
        kind: 'NodeClaim',
        metadata: { name },
        spec: {
          nodeClassRef: { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: 'default' },
          requirements: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }],
        },
      },
    });
    try {
      const deadline = Date.now() + 60_000;
      let published: string | undefined;
      while (!published && Date.now() < deadline) {
        const { receivedMessageItems } = await queue.receiveMessages({ numberOfMessages: 32 });
        for (const message of receivedMessageItems) {
          const event = parseObjectChangeEvent(message.messageText);
          if (event.data.kind === 'NodeClaim' && event.data.name === name) published = event.source;
          await queue.deleteMessage(message.messageId, message.popReceipt);
        }
        if (!published) await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(published, JSON.stringify(lines.slice(-5))).toBe('/clusters/integration/event-bridge');
      // Every watch ran with the ServiceAccount's permissions, none was refused.
      expect(lines.filter((line) => /forbidden/i.test(JSON.stringify(line)))).toEqual([]);
    } finally {
      await kubeConfig
        .makeApiClient(CustomObjectsApi)
        .deleteClusterCustomObject({ ...NodeClaimResource, name })
        .catch(() => undefined);
      bridge.kill('SIGTERM');
    }
  });
});
