// A bootstrap token Secret in kube-system, as a launch makes it but without an owner (no NodeClaim in
// these tests), for tests that join a simulated node the way kubelet does.
import { randomBytes, randomUUID } from 'node:crypto';
import type { CoreV1Api } from '@kubernetes/client-node';
import {
  bootstrapTokenId,
  bootstrapTokenSecret,
  bootstrapTokenSecretFrom,
} from '../../shared/cloudprovider/azure/decisions/bootstrap-token.js';

/** Creates the Secret and returns the token (`<id>.<secret>`) to put in the node's configuration. */
export async function createBootstrapToken(core: CoreV1Api, expiresAt: Date): Promise<string> {
  const tokenId = bootstrapTokenId(randomUUID());
  const tokenSecret = bootstrapTokenSecretFrom(randomBytes(16));
  const secret = bootstrapTokenSecret({
    nodeClaim: { name: 'none', uid: 'none' },
    tokenId,
    tokenSecret,
    expiresAt,
  });
  const { ownerReferences: _owner, ...metadata } = secret.metadata;
  await core.createNamespacedSecret({ namespace: 'kube-system', body: { ...secret, metadata } });
  return `${tokenId}.${tokenSecret}`;
}

/** The token a Secret read back (as admin) holds; undefined when it is not a usable token Secret. */
export function storedBootstrapToken(secret: {
  type?: string;
  data?: Record<string, string>;
}): { tokenId: string; tokenSecret: string; expiresAt: Date | undefined } | undefined {
  if (secret.type !== 'bootstrap.kubernetes.io/token' || !secret.data) return undefined;
  const field = (key: string): string | undefined => {
    const value = secret.data?.[key];
    return value === undefined ? undefined : Buffer.from(value, 'base64').toString('utf8');
  };
  const tokenId = field('token-id');
  const tokenSecret = field('token-secret');
  if (!tokenId || !tokenSecret) return undefined;
  const expiration = field('expiration');
  return { tokenId, tokenSecret, expiresAt: expiration ? new Date(expiration) : undefined };
}
