// Each NodeClaim's own bootstrap token: a `bootstrap.kubernetes.io/token` Secret in kube-system that
// authenticates its node as `system:bootstrap:<id>` (group system:bootstrappers:nodeclaim-azure) just long
// enough to request its client certificate. It expires shortly after the registration timeout, is owned
// by the NodeClaim (the garbage collector deletes it with the NodeClaim) and is deleted once the node
// registered. The token id is derived from the NodeClaim's UID and its launch attempt (the
// `karpenter.azure.com/launch-attempt` annotation the launch's claim writes), so each attempt makes its
// own token and never needs to read one back: the app's identity may create and delete its tokens but
// read no Secret at all. The secret half is random. Pure: no I/O.
import { createHash } from 'node:crypto';
import { LAUNCH_ATTEMPT_ANNOTATION } from '../../../decisions/launch-annotations.js';

export const BOOTSTRAP_TOKEN_NAMESPACE = 'kube-system';
export const BOOTSTRAP_TOKEN_SECRET_TYPE = 'bootstrap.kubernetes.io/token';
/** The extra group the tokens authenticate with; RBAC binds it to node bootstrapping and CSR approval. */
export const BOOTSTRAP_GROUP = 'system:bootstrappers:nodeclaim-azure';
/** How long past the registration timeout a token stays valid (clock skew, a slow last request). */
export const TOKEN_GRACE_MINUTES = 5;
export const NODECLAIM_LABEL = 'karpenter.sh/nodeclaim';
/** Marks the token Secrets this app made: only those it ever replaces or deletes. */
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY = 'nodeclaim-azure';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

function fromBytes(bytes: Uint8Array, length: number): string {
  let text = '';
  for (let i = 0; i < length; i++) text += ALPHABET[(bytes[i] ?? 0) % ALPHABET.length];
  return text;
}

// The annotation is the lifecycle's (launch writes it); exported here too for the token's readers.
export { LAUNCH_ATTEMPT_ANNOTATION };

/**
 * The 6-character token id of one launch attempt of a NodeClaim ([a-z0-9], as kubeadm-style bootstrap
 * tokens require). Without an attempt (a NodeClaim claimed before attempts were recorded) the UID alone.
 */
export function bootstrapTokenId(nodeClaimUid: string, attempt?: string): string {
  const input = attempt === undefined ? nodeClaimUid : `${nodeClaimUid}/${attempt}`;
  return fromBytes(createHash('sha256').update(input).digest(), 6);
}

/** The token id of the attempt a NodeClaim carries now (its last claimed launch). */
export function bootstrapTokenIdOf(nodeClaim: {
  metadata: { uid?: string; annotations?: Record<string, string> };
}): string {
  return bootstrapTokenId(
    nodeClaim.metadata.uid ?? '',
    nodeClaim.metadata.annotations?.[LAUNCH_ATTEMPT_ANNOTATION],
  );
}

/** The shape ValidatingAdmissionPolicy holds the app's token Secrets to (infra/k8s/functions). */
export const BOOTSTRAP_TOKEN_SECRET_NAME_PATTERN = /^bootstrap-token-[a-z0-9]{6}$/;

/** The 16-character secret half from random bytes (at least 16). */
export function bootstrapTokenSecretFrom(random: Uint8Array): string {
  if (random.length < 16) throw new RangeError('a bootstrap token secret needs 16 random bytes');
  return fromBytes(random, 16);
}

export const bootstrapTokenSecretName = (tokenId: string): string => `bootstrap-token-${tokenId}`;

export interface BootstrapTokenSecretInput {
  nodeClaim: { name: string; uid: string };
  tokenId: string;
  tokenSecret: string;
  expiresAt: Date;
}

export interface BootstrapTokenSecret {
  apiVersion: 'v1';
  kind: 'Secret';
  type: typeof BOOTSTRAP_TOKEN_SECRET_TYPE;
  metadata: {
    name: string;
    namespace: string;
    labels: Record<string, string>;
    ownerReferences: Array<{ apiVersion: string; kind: string; name: string; uid: string }>;
  };
  stringData: Record<string, string>;
}

export function tokenExpiry(now: Date, registrationTimeoutMinutes: number): Date {
  return new Date(now.getTime() + (registrationTimeoutMinutes + TOKEN_GRACE_MINUTES) * 60_000);
}

/** The Secret the API server's bootstrap token authenticator reads. */
export function bootstrapTokenSecret(input: BootstrapTokenSecretInput): BootstrapTokenSecret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    type: BOOTSTRAP_TOKEN_SECRET_TYPE,
    metadata: {
      name: bootstrapTokenSecretName(input.tokenId),
      namespace: BOOTSTRAP_TOKEN_NAMESPACE,
      labels: { [NODECLAIM_LABEL]: input.nodeClaim.name, [MANAGED_BY_LABEL]: MANAGED_BY },
      // Namespaced dependents may have a cluster-scoped owner: the garbage collector deletes the token
      // when the NodeClaim is gone, whatever happened to this system meanwhile.
      ownerReferences: [
        {
          apiVersion: 'karpenter.sh/v1',
          kind: 'NodeClaim',
          name: input.nodeClaim.name,
          uid: input.nodeClaim.uid,
        },
      ],
    },
    stringData: {
      'token-id': input.tokenId,
      'token-secret': input.tokenSecret,
      expiration: input.expiresAt.toISOString().replace(/\.\d{3}Z$/, 'Z'),
      'usage-bootstrap-authentication': 'true',
      'auth-extra-groups': BOOTSTRAP_GROUP,
      description: `bootstrap token of NodeClaim ${input.nodeClaim.name}`,
    },
  };
}
