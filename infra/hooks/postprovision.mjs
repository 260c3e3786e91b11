// azd postprovision: what the cluster needs once the Azure resources exist, from the Helm chart
// (charts/nodeclaim-azure): the CRDs, the functions' RBAC bound to the app identity (when
// kubernetesAuthorization is KubernetesRBAC), the node bootstrap bindings, and the event bridge with this
// deployment's identity, queue and cluster name. The bridge image is built in the new registry (az acr
// build: no local Docker); the chart is packaged and pushed to the same registry as an OCI artifact and
// installed from there, as a user installs it. Idempotent: `helm upgrade --install`, with the image pinned
// by the digest ACR built, and --take-ownership so a cluster installed with chart 0.1.0 (CRDs in crds/,
// owned by no release) hands its CRDs to the release instead of refusing the upgrade.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clusterKubeconfig, output, required, run, say } from './azd-tools.mjs';

const root = join(import.meta.dirname, '..', '..');
const hint = 'It is an output of the deployment; run azd provision first.';
const clusterName = required('aksClusterName', hint);
const clusterGroup = required('aksClusterResourceGroupName', hint);
const kubeconfig = clusterKubeconfig(clusterGroup, clusterName);
const chartDirectory = join(root, 'charts/nodeclaim-azure');
const chartVersion = /^version:\s*(\S+)/m.exec(readFileSync(join(chartDirectory, 'Chart.yaml'), 'utf8'))?.[1];

const registry = required('bridgeRegistryName', hint);
const loginServer = required('bridgeRegistryLoginServer', hint);
const tag = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '').toLowerCase();
say(`1/2 event bridge image ${loginServer}/nodeclaim-event-bridge:${tag}, built by ACR and pinned by digest`);
run('az', [
  'acr',
  'build',
  '-r',
  registry,
  '-t',
  `nodeclaim-event-bridge:${tag}`,
  '-f',
  join(root, 'bridge/Dockerfile'),
  root,
]);
// The digest of what was just built: a later push of the same tag cannot change what the cluster runs.
const digest = run(
  'az',
  [
    'acr',
    'repository',
    'show',
    '--name',
    registry,
    '--image',
    `nodeclaim-event-bridge:${tag}`,
    '--query',
    'digest',
    '--output',
    'tsv',
  ],
  { quiet: true },
).trim();

say(`2/2 chart nodeclaim-azure ${chartVersion} pushed to oci://${loginServer}/helm and installed from there`);
// The registry accepts the Azure CLI login's token; helm keeps it in its own registry config.
const accessToken = run(
  'az',
  ['acr', 'login', '--name', registry, '--expose-token', '--output', 'tsv', '--query', 'accessToken'],
  { quiet: true },
).trim();
run(
  'helm',
  [
    'registry',
    'login',
    loginServer,
    '--username',
    '00000000-0000-0000-0000-000000000000',
    '--password-stdin',
  ],
  {
    input: accessToken,
  },
);
const packaged = mkdtempSync(join(tmpdir(), 'nodeclaim-chart-'));
run('helm', ['package', chartDirectory, '--destination', packaged]);
run('helm', ['push', join(packaged, `nodeclaim-azure-${chartVersion}.tgz`), `oci://${loginServer}/helm`]);
const kubernetesRbac = output('kubernetesAuthorization') === 'KubernetesRBAC';
// The bridge's own settings, when set in the azd environment (azd env set BRIDGE_RESYNC_SECONDS 600):
// passed on every run, so they survive the next `azd provision`, which a value set by hand with `helm
// upgrade` does not. Numbers with --set (the chart's schema wants integers), text with --set-string.
const bridgeSettings = [
  ['BRIDGE_HEALTH_PORT', 'controller.healthProbe.port', '--set'],
  ['BRIDGE_RESYNC_SECONDS', 'settings.resyncSeconds', '--set'],
  ['BRIDGE_POD_RESYNC_SECONDS', 'settings.podResyncSeconds', '--set'],
  ['BRIDGE_SOURCE', 'settings.source', '--set-string'],
  ['BRIDGE_BUFFER_CAPACITY', 'settings.bufferCapacity', '--set'],
  ['BRIDGE_SEND_CONCURRENCY', 'settings.sendConcurrency', '--set'],
  ['BRIDGE_SHUTDOWN_FLUSH_SECONDS', 'settings.shutdownFlushSeconds', '--set'],
  ['BRIDGE_LOG_LEVEL', 'logLevel', '--set-string'],
];
const bridgeValues = bridgeSettings.flatMap(([name, path, flag]) => {
  const value = process.env[name]?.trim();
  return value ? [flag, `${path}=${value}`] : [];
});
process.stdout.write(
  run('helm', [
    'upgrade',
    '--install',
    '--take-ownership',
    'nodeclaim-azure',
    `oci://${loginServer}/helm/nodeclaim-azure`,
    '--version',
    chartVersion,
    '--kubeconfig',
    kubeconfig,
    '--namespace',
    // The namespace the bridge identity's federated credential trusts (bridgeServiceAccountNamespace).
    'nodeclaim-system',
    '--create-namespace',
    '--set',
    `settings.clusterName=${required('clusterName', hint)}`,
    '--set',
    `settings.queueServiceUrl=${required('bridgeQueueServiceUrl', hint)}`,
    '--set',
    `settings.queueName=${required('bridgeQueueName', hint)}`,
    '--set',
    `serviceAccount.annotations.azure\\.workload\\.identity/client-id=${required('bridgeIdentityClientId', hint)}`,
    '--set',
    `controller.image.repository=${loginServer}/nodeclaim-event-bridge`,
    '--set',
    `controller.image.tag=${tag}`,
    '--set',
    `controller.image.digest=${digest}`,
    '--set',
    `functions.kubernetesRbac=${kubernetesRbac}`,
    // Named under Azure RBAC too: the chart's admission policy holds the identity's Secrets in kube-system
    // to its own bootstrap tokens whichever authorizer grants the verbs.
    '--set',
    `functions.principalId=${required('functionPrincipalId', hint)}`,
    ...bridgeValues,
  ]),
);
say(
  `done. Apply your NodePools and AKSNodeClasses; watch with: kubectl get nodepools,aksnodeclasses,nodeclaims -o wide`,
);
