// Each NodeClaim's own bootstrap token: a `bootstrap.kubernetes.io/token` Secret in kube-system that
// authenticates its node as `system:bootstrap:<id>` (group system:bootstrappers:nodeclaim-azure) just long
// enough to request its client certificate. It expires shortly after the registration timeout, is owned
// by the NodeClaim (the garbage collector deletes it with the NodeClaim) and is deleted once the node
// registered. The token id is derived from the NodeClaim's UID, so a retried launch finds the token it
// already created; the secret half is random. Pure: no I/O.
import { createHash } from 'node:crypto';

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

/** The 6-character token id of a NodeClaim ([a-z0-9], as kubeadm-style bootstrap tokens require). */
export function bootstrapTokenId(nodeClaimUid: string): string {
  return fromBytes(createHash('sha256').update(nodeClaimUid).digest(), 6);
}

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

export interface StoredBootstrapToken {
  tokenId: string;
  tokenSecret: string;
  expiresAt: Date | undefined;
  ownerUid: string | undefined;
}

/** The token a stored Secret holds (its data is base64); undefined when it is not a usable token Secret. */
export function storedBootstrapToken(secret: {
  type?: string;
  data?: Record<string, string>;
  metadata?: { ownerReferences?: Array<{ uid: string }> };
}): StoredBootstrapToken | undefined {
  if (secret.type !== BOOTSTRAP_TOKEN_SECRET_TYPE || !secret.data) return undefined;
  const field = (key: string): string | undefined => {
    const value = secret.data?.[key];
    return value === undefined ? undefined : Buffer.from(value, 'base64').toString('utf8');
  };
  const tokenId = field('token-id');
  const tokenSecret = field('token-secret');
  if (!tokenId || !tokenSecret) return undefined;
  const expiration = field('expiration');
  return {
    tokenId,
    tokenSecret,
    expiresAt: expiration ? new Date(expiration) : undefined,
    ownerUid: secret.metadata?.ownerReferences?.[0]?.uid,
  };
}

/**
 * Whether a Secret under a token name is one this app made for a NodeClaim: a bootstrap token of its
 * group, labelled as its own, owned by a NodeClaim. Token IDs are six characters derived from UIDs, so
 * another tool's token can share one; that Secret is never replaced nor deleted.
 */
export function isOwnBootstrapToken(secret: {
  type?: string;
  data?: Record<string, string>;
  metadata?: {
    labels?: Record<string, string>;
    ownerReferences?: Array<{ apiVersion?: string; kind?: string; uid: string }>;
  };
}): boolean {
  const owner = secret.metadata?.ownerReferences?.[0];
  const groups = secret.data?.['auth-extra-groups'];
  return (
    secret.type === BOOTSTRAP_TOKEN_SECRET_TYPE &&
    secret.metadata?.labels?.[MANAGED_BY_LABEL] === MANAGED_BY &&
    owner?.kind === 'NodeClaim' &&
    (owner.apiVersion ?? '').startsWith('karpenter.sh/') &&
    groups !== undefined &&
    Buffer.from(groups, 'base64').toString('utf8') === BOOTSTRAP_GROUP
  );
}

/** Whether a stored token can still be handed to a VM that will take minutes to boot. */
export function reusable(
  token: StoredBootstrapToken,
  nodeClaimUid: string,
  now: Date,
  minimumMinutes: number,
): boolean {
  if (token.ownerUid !== nodeClaimUid) return false;
  if (token.expiresAt === undefined || Number.isNaN(token.expiresAt.getTime())) return false;
  return token.expiresAt.getTime() - now.getTime() >= minimumMinutes * 60_000;
}
