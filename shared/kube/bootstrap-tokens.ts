// The per-NodeClaim bootstrap token Secrets in kube-system (see decisions/bootstrap-token.ts): ensure one
// exists and is fresh before a VM is created with it, delete it once the node registered. Only Secrets
// this app made are ever replaced or deleted (isOwnBootstrapToken), and each delete is guarded by the
// UID of the Secret that was judged, so a Secret recreated meanwhile by someone else is not taken.
import { randomBytes } from 'node:crypto';
import type { CoreV1Api, V1Secret } from '@kubernetes/client-node';
import {
  BOOTSTRAP_TOKEN_NAMESPACE,
  bootstrapTokenId,
  bootstrapTokenSecret,
  bootstrapTokenSecretFrom,
  bootstrapTokenSecretName,
  isOwnBootstrapToken,
  reusable,
  storedBootstrapToken,
  tokenExpiry,
} from '../decisions/bootstrap-token.js';
import { isAlreadyExists, isConflict, isNotFound } from './errors.js';

export interface BootstrapTokenOptions {
  now: Date;
  registrationTimeoutMinutes: number;
}

async function readSecret(core: CoreV1Api, name: string): Promise<V1Secret | undefined> {
  try {
    return await core.readNamespacedSecret({ name, namespace: BOOTSTRAP_TOKEN_NAMESPACE });
  } catch (error) {
    if (isNotFound(error)) return undefined;
    throw error;
  }
}

/** Thrown when a token name is taken by a Secret this app did not make (a token-ID collision). */
export class ForeignBootstrapTokenError extends Error {
  override readonly name = 'ForeignBootstrapTokenError';
}

async function deleteSecret(core: CoreV1Api, secret: V1Secret): Promise<void> {
  try {
    await core.deleteNamespacedSecret({
      name: secret.metadata?.name ?? '',
      namespace: BOOTSTRAP_TOKEN_NAMESPACE,
      body: { preconditions: { uid: secret.metadata?.uid ?? '' } },
    });
  } catch (error) {
    // Gone, or replaced by another Secret (409, the UID precondition): either way not ours to delete.
    if (!isNotFound(error) && !isConflict(error)) throw error;
  }
}

/**
 * "<id>.<secret>" of the NodeClaim's token: the stored one while it stays valid for a whole registration
 * timeout, else a new one (the stale Secret is replaced). Concurrent callers converge on one Secret.
 */
export async function ensureBootstrapToken(
  core: CoreV1Api,
  nodeClaim: { name: string; uid: string },
  options: BootstrapTokenOptions,
): Promise<string> {
  const tokenId = bootstrapTokenId(nodeClaim.uid);
  const name = bootstrapTokenSecretName(tokenId);
  for (let attempt = 0; attempt < 3; attempt++) {
    const existing = await readSecret(core, name);
    const stored = existing ? storedBootstrapToken(existing) : undefined;
    if (stored && reusable(stored, nodeClaim.uid, options.now, options.registrationTimeoutMinutes)) {
      return `${stored.tokenId}.${stored.tokenSecret}`;
    }
    if (existing) {
      if (!isOwnBootstrapToken(existing))
        throw new ForeignBootstrapTokenError(
          `Secret ${BOOTSTRAP_TOKEN_NAMESPACE}/${name} (bootstrap token ${tokenId}) exists but was not made by ` +
            `this app; it is left alone and NodeClaim ${nodeClaim.name} cannot get a token under that ID`,
        );
      await deleteSecret(core, existing);
    }
    const tokenSecret = bootstrapTokenSecretFrom(randomBytes(16));
    const body = bootstrapTokenSecret({
      nodeClaim,
      tokenId,
      tokenSecret,
      expiresAt: tokenExpiry(options.now, options.registrationTimeoutMinutes),
    });
    try {
      await core.createNamespacedSecret({ namespace: BOOTSTRAP_TOKEN_NAMESPACE, body });
      return `${tokenId}.${tokenSecret}`;
    } catch (error) {
      // Another delivery created it meanwhile: read and use theirs.
      if (!isAlreadyExists(error)) throw error;
    }
  }
  throw new Error(`bootstrap token ${name} kept changing while it was being created`);
}

/**
 * Deletes the NodeClaim's token (its node registered, or it is gone) when the Secret under its name is
 * this app's and this NodeClaim's; absent is fine, and anyone else's is left alone.
 */
export async function deleteBootstrapToken(core: CoreV1Api, nodeClaimUid: string): Promise<void> {
  const existing = await readSecret(core, bootstrapTokenSecretName(bootstrapTokenId(nodeClaimUid)));
  if (!existing || !isOwnBootstrapToken(existing)) return;
  if (storedBootstrapToken(existing)?.ownerUid !== nodeClaimUid) return;
  await deleteSecret(core, existing);
}
