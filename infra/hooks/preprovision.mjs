// azd preprovision: checks the tools and the cluster, and reads from the cluster every value the
// deployment needs that the operator has not set (azd env set NAME value overrides any of them).
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { clusterKubeconfig, fail, output, required, requireTools, run, say } from './azd-tools.mjs';

requireTools([
  ['az', ['version'], 'Azure CLI: reads the cluster, builds the bridge image in ACR'],
  ['kubectl', ['version', '--client'], 'reads the cluster'],
  ['helm', ['version'], 'installs the chart (CRDs, RBAC, the bridge) from the registry'],
  ['kubelogin', ['--version'], 'AKS-managed Entra ID login for kubectl (az aks install-cli)'],
]);

const hint =
  'Run: azd env set AKS_CLUSTER_NAME <cluster>; azd env set AKS_CLUSTER_RESOURCE_GROUP <resource group>';
const clusterName = required('AKS_CLUSTER_NAME', hint);
const clusterGroup = required('AKS_CLUSTER_RESOURCE_GROUP', hint);

const cluster = JSON.parse(run('az', ['aks', 'show', '-g', clusterGroup, '-n', clusterName, '-o', 'json']));
if (!cluster.aadProfile?.managed)
  fail(`${clusterName} has no AKS-managed Entra ID integration, which the functions authenticate with`);
if (!cluster.oidcIssuerProfile?.enabled || !cluster.securityProfile?.workloadIdentity?.enabled) {
  fail(
    `${clusterName} needs the OIDC issuer and Workload ID: az aks update -g ${clusterGroup} -n ${clusterName} --enable-oidc-issuer --enable-workload-identity`,
  );
}
const location = output('AZURE_LOCATION');
if (location && location.toLowerCase() !== String(cluster.location).toLowerCase()) {
  fail(
    `AZURE_LOCATION is ${location} but the cluster is in ${cluster.location}: azd env set AZURE_LOCATION ${cluster.location}`,
  );
}

const found = {};
const byoSubnet = cluster.agentPoolProfiles?.find((p) => p.vnetSubnetId)?.vnetSubnetId;
found.NODE_SUBNET_ID =
  byoSubnet ??
  run('az', [
    'network',
    'vnet',
    'list',
    '-g',
    cluster.nodeResourceGroup,
    '--query',
    '[0].subnets[0].id',
    '-o',
    'tsv',
  ]).trim();
found.ATTACH_NSG_TO_NIC = byoSubnet ? 'true' : 'false';
found.NODE_SECURITY_GROUP_NAME = run('az', [
  'network',
  'nsg',
  'list',
  '-g',
  cluster.nodeResourceGroup,
  '--query',
  "[?starts_with(name, 'aks-agentpool-')].name | [0]",
  '-o',
  'tsv',
]).trim();
const clusterKey = cluster.linuxProfile?.ssh?.publicKeys?.[0]?.keyData;
const localKey = ['id_ed25519.pub', 'id_rsa.pub']
  .map((file) => join(homedir(), '.ssh', file))
  .map((path) => {
    try {
      return readFileSync(path, 'utf8').trim();
    } catch {
      return undefined;
    }
  })
  .find(Boolean);
found.NODE_SSH_PUBLIC_KEY = clusterKey ?? localKey;
const kubeconfig = readFileSync(clusterKubeconfig(clusterGroup, clusterName), 'utf8');
found.KUBE_CA_CERT = /certificate-authority-data:\s*(\S+)/.exec(kubeconfig)?.[1];

for (const [name, value] of Object.entries(found)) {
  if (output(name)) {
    say(`${name}: kept the value already set`);
    continue;
  }
  if (!value) fail(`could not find ${name} from the cluster; set it: azd env set ${name} <value>`);
  run('azd', ['env', 'set', name, value], { quiet: true });
  say(`${name}: ${name === 'KUBE_CA_CERT' ? '(the cluster CA)' : value}`);
}
