// The per-NodeClaim bootstrap token Secrets in kube-system (see cloudprovider/azure/decisions/bootstrap-token.ts): one made
// for each launch attempt before the VM that carries it, deleted when that VM was never made, and deleted
// once the node registered. The app never reads a Secret: its identity holds only `create` and `delete`
// on Secrets in kube-system, and the ValidatingAdmissionPolicy shipped beside its Role
// (infra/k8s/functions/bootstrap-token-policy.yaml) lets it create nothing but a bootstrap token of its
// own shape and delete nothing but those. So a token is never read back: each attempt makes its own
// (its id derives from the NodeClaim's UID and the attempt), and deletes go by name, the policy refusing
// any Secret that is not the app's.
import { randomBytes } from 'node:crypto';
import type { CoreV1Api } from '@kubernetes/client-node';
import {
  BOOTSTRAP_TOKEN_NAMESPACE,
  bootstrapTokenId,
  bootstrapTokenSecret,
  bootstrapTokenSecretFrom,
  bootstrapTokenSecretName,
  tokenExpiry,
} from '../cloudprovider/azure/decisions/bootstrap-token.js';
import { isAlreadyExists, isNotFound, statusCodeOf } from './errors.js';

export interface BootstrapTokenOptions {
  now: Date;
  registrationTimeoutMinutes: number;
}

export interface CreatedBootstrapToken {
  /** "<id>.<secret>", for the node's configuration. */
  token: string;
  /** The Secret's name, to delete it again when the VM that was to carry it is never made. */
  secretName: string;
}

/**
 * Thrown when the attempt's token name is taken already: by another tool's token sharing the six
 * characters, or by this very attempt's earlier try. Either way it is not read (the app may not) nor
 * replaced; the next delivery is another attempt, under another name.
 */
export class BootstrapTokenTakenError extends Error {
  override readonly name = 'BootstrapTokenTakenError';
}

/** Makes the token of one launch attempt of a NodeClaim, valid for a whole registration timeout. */
export async function createBootstrapToken(
  core: CoreV1Api,
  nodeClaim: { name: string; uid: string; attempt?: string },
  options: BootstrapTokenOptions,
): Promise<CreatedBootstrapToken> {
  const tokenId = bootstrapTokenId(nodeClaim.uid, nodeClaim.attempt);
  const tokenSecret = bootstrapTokenSecretFrom(randomBytes(16));
  const body = bootstrapTokenSecret({
    nodeClaim,
    tokenId,
    tokenSecret,
    expiresAt: tokenExpiry(options.now, options.registrationTimeoutMinutes),
  });
  try {
    await core.createNamespacedSecret({ namespace: BOOTSTRAP_TOKEN_NAMESPACE, body });
  } catch (error) {
    if (!isAlreadyExists(error)) throw error;
    throw new BootstrapTokenTakenError(
      `Secret ${BOOTSTRAP_TOKEN_NAMESPACE}/${body.metadata.name} (bootstrap token ${tokenId} of NodeClaim ` +
        `${nodeClaim.name}) exists already; it is left alone, and the next launch attempt uses another name`,
    );
  }
  return { token: `${tokenId}.${tokenSecret}`, secretName: body.metadata.name };
}

/**
 * Deletes a token Secret by name. Absent is fine; refused (403 from RBAC, or the admission policy's
 * refusal because the Secret under that name is not one of the app's tokens) means it is not ours and
 * is left alone: reported as `false`.
 */
export async function deleteBootstrapTokenSecret(core: CoreV1Api, secretName: string): Promise<boolean> {
  try {
    await core.deleteNamespacedSecret({ name: secretName, namespace: BOOTSTRAP_TOKEN_NAMESPACE });
    return true;
  } catch (error) {
    if (isNotFound(error)) return true;
    const status = statusCodeOf(error);
    if (status === 403 || status === 422) return false;
    throw error;
  }
}

/** Deletes the token of the NodeClaim's current launch attempt (its node registered, or it is gone). */
export async function deleteBootstrapToken(
  core: CoreV1Api,
  nodeClaim: { uid: string; attempt?: string },
): Promise<boolean> {
  return deleteBootstrapTokenSecret(
    core,
    bootstrapTokenSecretName(bootstrapTokenId(nodeClaim.uid, nodeClaim.attempt)),
  );
}
