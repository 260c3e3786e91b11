// azd postprovision: what the cluster needs once the Azure resources exist. Applies the CRDs, the
// functions' RBAC (bound to the app identity) when kubernetesAuthorization is KubernetesRBAC, builds the
// event bridge image in the new registry (az acr build: no local Docker) and deploys the bridge with this
// deployment's identity, queue and cluster name. Idempotent: every step is an apply.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { clusterKubeconfig, output, required, run, say } from './azd-tools.mjs';

const root = join(import.meta.dirname, '..', '..');
const hint = 'It is an output of the deployment; run azd provision first.';
const clusterName = required('aksClusterName', hint);
const clusterGroup = required('aksClusterResourceGroupName', hint);
const kubeconfig = clusterKubeconfig(clusterGroup, clusterName);
const kubectl = (args, input) =>
  run('kubectl', ['--kubeconfig', kubeconfig, ...args], input === undefined ? {} : { input });

say('1/4 CRDs (NodePool, NodeClaim, AKSNodeClass)');
process.stdout.write(
  kubectl(['apply', '--server-side', '--force-conflicts', '-f', join(root, 'infra/k8s/crds')]),
);

if (output('kubernetesAuthorization') === 'KubernetesRBAC') {
  const principal = required('functionPrincipalId', hint);
  say(`2/4 the functions' ClusterRole and sweep Lease Role, bound to the app identity ${principal}`);
  const manifests = kubectl(['kustomize', join(root, 'infra/k8s/functions')]).replaceAll(
    'FUNCTION_PRINCIPAL_ID',
    principal,
  );
  process.stdout.write(kubectl(['apply', '-f', '-'], manifests));
} else {
  say('2/4 functions RBAC: granted in Azure (kubernetesAuthorization AzureRBAC), nothing to apply');
}

const registry = required('bridgeRegistryName', hint);
const loginServer = required('bridgeRegistryLoginServer', hint);
const tag = new Date().toISOString().replace(/[-:]/g, '').replace(/\..*/, '').toLowerCase();
say(`3/4 event bridge image ${loginServer}/nodeclaim-event-bridge:${tag}, built by ACR`);
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

say(
  '4/4 event bridge (namespace, ServiceAccount with the bridge identity, read-only ClusterRole, ConfigMap, Deployment)',
);
const overlay = join(root, '.package', 'bridge-overlay');
mkdirSync(overlay, { recursive: true });
writeFileSync(
  join(overlay, 'kustomization.yaml'),
  JSON.stringify(
    {
      apiVersion: 'kustomize.config.k8s.io/v1beta1',
      kind: 'Kustomization',
      resources: ['../../infra/k8s/bridge'],
      images: [
        { name: 'nodeclaim-event-bridge', newName: `${loginServer}/nodeclaim-event-bridge`, newTag: tag },
      ],
      patches: [
        {
          target: { kind: 'ConfigMap', name: 'event-bridge-settings' },
          patch: JSON.stringify([
            { op: 'replace', path: '/data/CLUSTER_NAME', value: required('clusterName', hint) },
            {
              op: 'replace',
              path: '/data/BRIDGE_QUEUE_SERVICE_URL',
              value: required('bridgeQueueServiceUrl', hint),
            },
            { op: 'replace', path: '/data/BRIDGE_QUEUE_NAME', value: required('bridgeQueueName', hint) },
          ]),
        },
        {
          target: { kind: 'ServiceAccount', name: 'event-bridge' },
          patch: JSON.stringify([
            {
              op: 'replace',
              path: '/metadata/annotations/azure.workload.identity~1client-id',
              value: required('bridgeIdentityClientId', hint),
            },
          ]),
        },
      ],
    },
    null,
    2,
  ),
);
process.stdout.write(kubectl(['apply', '-k', overlay]));
say(
  `done. Apply your NodePools and AKSNodeClasses; watch with: kubectl get nodepools,aksnodeclasses,nodeclaims`,
);
