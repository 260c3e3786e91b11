// The identities the local stack and the tests reach the API server as: the Function App as a user of its
// own, bound to exactly the roles of infra/k8s/functions, and the event bridge as its ServiceAccount with
// the role of infra/k8s/bridge. Both are applied from those manifests (through their kustomization.yaml
// resource lists), never from a copy, so a permission the shipped roles lack fails here as it would in a
// cluster. The admin identity only sets them up (and serves test set-up and assertions).
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  AuthenticationV1Api,
  AuthorizationV1Api,
  CoreV1Api,
  KubeConfig,
  KubernetesObjectApi,
  PatchStrategy,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { parse, parseAllDocuments } from 'yaml';
import { writeKubeconfig } from '../control-plane/kubeconfig.js';
import { issueClientCertificate } from '../control-plane/pki.js';
import { isNotFound } from '../../shared/kube/errors.js';
import { applyRbacMutation, type RbacMutation } from './rbac-mutation.js';

const K8S_DIRECTORY = join(import.meta.dirname, '..', '..', 'infra', 'k8s');

/** What bindings.yaml names FUNCTION_PRINCIPAL_ID: on AKS the managed identity's object ID, here a user. */
export const FUNCTIONS_USER = 'nodeclaim-functions';
const PRINCIPAL_PLACEHOLDER = 'FUNCTION_PRINCIPAL_ID';
const FIELD_MANAGER = 'nodeclaim-azure-local';
/** A ServiceAccount token long enough for any local run; the API server signs it with its own key. */
const BRIDGE_TOKEN_SECONDS = 48 * 3600;

export interface ShippedIdentities {
  functions: { user: string; kubeconfigPath: string };
  bridge: { user: string; kubeconfigPath: string };
}

export interface ControlPlaneAccess {
  /** The admin (system:masters) kubeconfig: only for setting up the identities. */
  kubeconfigPath: string;
  server: string;
  caCertPath: string;
  caKeyPath: string;
}

type RbacObject = KubernetesObject & {
  rules?: { apiGroups?: string[]; resources?: string[]; resourceNames?: string[]; verbs: string[] }[];
  roleRef?: { kind: string; name: string };
  subjects?: { kind: string; name: string; namespace?: string }[];
};

/** Every object of a kustomization directory, in its resources order, placeholders filled in. */
async function kustomizedObjects(directory: string, principal: string): Promise<RbacObject[]> {
  const kustomization = parse(await readFile(join(directory, 'kustomization.yaml'), 'utf8')) as {
    resources: string[];
  };
  const objects: RbacObject[] = [];
  for (const file of kustomization.resources) {
    const text = (await readFile(join(directory, file), 'utf8')).replaceAll(PRINCIPAL_PLACEHOLDER, principal);
    for (const document of parseAllDocuments(text)) {
      const object = document.toJS() as RbacObject | null;
      if (object) objects.push(object);
    }
  }
  return objects;
}

/** The RBAC objects of infra/k8s/functions with the Function App's user as their subject. */
export function functionsRbacObjects(user: string, mutation?: RbacMutation): Promise<RbacObject[]> {
  return kustomizedObjects(join(K8S_DIRECTORY, 'functions'), user).then((objects) =>
    mutation ? applyRbacMutation(objects, mutation) : objects,
  );
}

/** What of infra/k8s/bridge gives the bridge its identity (the ConfigMap and Deployment run nothing here). */
async function bridgeIdentityObjects(mutation?: RbacMutation): Promise<RbacObject[]> {
  const identityKinds = new Set(['Namespace', 'ServiceAccount', 'ClusterRole', 'ClusterRoleBinding']);
  const objects = (await kustomizedObjects(join(K8S_DIRECTORY, 'bridge'), '')).filter((o) =>
    identityKinds.has(o.kind ?? ''),
  );
  return mutation ? applyRbacMutation(objects, mutation) : objects;
}

/** Server-side apply, forced: the manifest is the truth, whatever an earlier run or test left behind. */
export async function applyObjects(config: KubeConfig, objects: readonly KubernetesObject[]): Promise<void> {
  const api = KubernetesObjectApi.makeApiClient(config);
  for (const object of objects) {
    await api.patch(object, undefined, undefined, FIELD_MANAGER, true, PatchStrategy.ServerSideApply);
  }
}

function adminConfig(kubeconfigPath: string): KubeConfig {
  const config = new KubeConfig();
  config.loadFromFile(kubeconfigPath);
  return config;
}

/**
 * Issues the Function App's client certificate, obtains the bridge's ServiceAccount token, applies both
 * roles from the manifests, and writes one kubeconfig per identity into `directory`. Idempotent: a second
 * call on the same control plane re-applies the same objects.
 */
export async function provisionShippedIdentities(
  access: ControlPlaneAccess,
  directory: string,
  mutation: RbacMutation | undefined = rbacMutationFromEnvironment(),
): Promise<ShippedIdentities> {
  await mkdir(directory, { recursive: true });
  const admin = adminConfig(access.kubeconfigPath);

  const functionsObjects = await functionsRbacObjects(FUNCTIONS_USER, mutation);
  await applyObjects(admin, functionsObjects);
  const certificate = await issueClientCertificate(
    directory,
    { cert: access.caCertPath, key: access.caKeyPath },
    FUNCTIONS_USER,
  );
  const functionsKubeconfig = join(directory, 'functions.kubeconfig');
  await writeKubeconfig(functionsKubeconfig, {
    server: access.server,
    caCertPath: access.caCertPath,
    userName: FUNCTIONS_USER,
    clientCertPath: certificate.cert,
    clientKeyPath: certificate.key,
  });

  const bridgeObjects = await bridgeIdentityObjects(mutation);
  await applyObjects(admin, bridgeObjects);
  const serviceAccount = bridgeObjects.find((o) => o.kind === 'ServiceAccount');
  const name = serviceAccount?.metadata?.name;
  const namespace = serviceAccount?.metadata?.namespace;
  if (!name || !namespace) throw new Error('infra/k8s/bridge has no namespaced ServiceAccount');
  const tokenRequest = await admin.makeApiClient(CoreV1Api).createNamespacedServiceAccountToken({
    name,
    namespace,
    body: { spec: { audiences: [], expirationSeconds: BRIDGE_TOKEN_SECONDS } },
  });
  const token = tokenRequest.status?.token;
  if (!token) throw new Error(`the API server issued no token for ServiceAccount ${namespace}/${name}`);
  const bridgeUser = `system:serviceaccount:${namespace}:${name}`;
  const bridgeKubeconfig = join(directory, 'bridge.kubeconfig');
  await writeKubeconfig(bridgeKubeconfig, {
    server: access.server,
    caCertPath: access.caCertPath,
    userName: bridgeUser,
    token,
  });

  const identities: ShippedIdentities = {
    functions: { user: FUNCTIONS_USER, kubeconfigPath: functionsKubeconfig },
    bridge: { user: bridgeUser, kubeconfigPath: bridgeKubeconfig },
  };
  await expectAuthenticatedAs(identities);
  return identities;
}

/** Each kubeconfig authenticates as the user it is for (a certificate or token mix-up fails here, loudly). */
async function expectAuthenticatedAs(identities: ShippedIdentities): Promise<void> {
  for (const identity of [identities.functions, identities.bridge]) {
    const review = await adminConfig(identity.kubeconfigPath)
      .makeApiClient(AuthenticationV1Api)
      .createSelfSubjectReview({ body: {} });
    const user = review.status?.userInfo?.username;
    if (user !== identity.user)
      throw new Error(`${identity.kubeconfigPath} authenticates as ${String(user)}, not ${identity.user}`);
  }
}

/**
 * A sweep Lease of a run's own, for stacks that share one control plane: the namespace `namespace` gets
 * the shipped Lease Role and its RoleBinding (infra/k8s/functions, unchanged but for the namespace), so
 * each run's sweep holds `nodeclaim-azure-sweep` there under exactly the rights it has in kube-system.
 * Returns a function that deletes the namespace again.
 */
export async function provisionSweepLeaseNamespace(
  adminKubeconfigPath: string,
  namespace: string,
  user: string = FUNCTIONS_USER,
): Promise<() => Promise<void>> {
  const admin = adminConfig(adminKubeconfigPath);
  const objects = await functionsRbacObjects(user, rbacMutationFromEnvironment());
  const leaseRoles = objects.filter(
    (o) => o.kind === 'Role' && o.rules?.some((rule) => rule.resources?.includes('leases')),
  );
  const roleNames = new Set(leaseRoles.map((role) => role.metadata?.name));
  const bindings = objects.filter((o) => o.kind === 'RoleBinding' && roleNames.has(o.roleRef?.name));
  const inNamespace = (object: RbacObject): RbacObject => ({
    ...object,
    metadata: { ...object.metadata, namespace },
  });
  await applyObjects(admin, [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } },
    ...leaseRoles.map(inNamespace),
    ...bindings.map(inNamespace),
  ]);
  // The API server authorizes from an informer's copy of the RBAC objects, which follows a new binding
  // a moment later (longer on a loaded machine): a caller that uses the Lease at once could be refused.
  // So this returns once the API server itself says the user may read the Lease, when the Role grants it
  // (a mutation run may have taken that away on purpose).
  const getRule = leaseRoles
    .flatMap((role) => role.rules ?? [])
    .find((rule) => rule.resources?.includes('leases') && rule.verbs.includes('get'));
  if (getRule && bindings.length > 0) await untilAllowed(admin, user, namespace, getRule.resourceNames?.[0]);
  return async () => {
    await admin
      .makeApiClient(CoreV1Api)
      .deleteNamespace({ name: namespace })
      .catch((error: unknown) => {
        if (!isNotFound(error)) throw error;
      });
  };
}

/** The mutation check (scripts/rbac-mutation-check.ts) removes one permission per run through this. */
export const RBAC_MUTATION_ENV = 'NODECLAIM_RBAC_MUTATION';

export function rbacMutationFromEnvironment(): RbacMutation | undefined {
  const raw = process.env[RBAC_MUTATION_ENV];
  return raw ? (JSON.parse(raw) as RbacMutation) : undefined;
}

/** Polls a SubjectAccessReview until `user` may get the Lease `name` in `namespace`; gives up after 30 s. */
async function untilAllowed(
  admin: KubeConfig,
  user: string,
  namespace: string,
  name: string | undefined,
): Promise<void> {
  const authorization = admin.makeApiClient(AuthorizationV1Api);
  const deadline = Date.now() + 30_000;
  for (;;) {
    const review = await authorization.createSubjectAccessReview({
      body: {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: {
          user,
          resourceAttributes: {
            namespace,
            verb: 'get',
            group: 'coordination.k8s.io',
            resource: 'leases',
            ...(name ? { name } : {}),
          },
        },
      },
    });
    if (review.status?.allowed) return;
    if (Date.now() > deadline)
      throw new Error(`${user} still may not get leases in ${namespace} 30 s after its RoleBinding was made`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
