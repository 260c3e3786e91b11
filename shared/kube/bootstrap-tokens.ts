// The per-NodeClaim bootstrap token Secrets in kube-system (see decisions/bootstrap-token.ts): ensure one
// exists and is fresh before a VM is created with it, delete it once the node registered.
import { randomBytes } from 'node:crypto';
import type { CoreV1Api, V1Secret } from '@kubernetes/client-node';
import {
  BOOTSTRAP_TOKEN_NAMESPACE,
  bootstrapTokenId,
  bootstrapTokenSecret,
  bootstrapTokenSecretFrom,
  bootstrapTokenSecretName,
  reusable,
  storedBootstrapToken,
  tokenExpiry,
} from '../decisions/bootstrap-token.js';
import { isAlreadyExists, isNotFound } from './errors.js';

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

async function deleteSecret(core: CoreV1Api, name: string): Promise<void> {
  try {
    await core.deleteNamespacedSecret({ name, namespace: BOOTSTRAP_TOKEN_NAMESPACE });
  } catch (error) {
    if (!isNotFound(error)) throw error;
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
    if (existing) await deleteSecret(core, name);
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

/** Deletes the NodeClaim's token (its node registered, or it is gone); absent is fine. */
export async function deleteBootstrapToken(core: CoreV1Api, nodeClaimUid: string): Promise<void> {
  await deleteSecret(core, bootstrapTokenSecretName(bootstrapTokenId(nodeClaimUid)));
}
