import { describe, expect, it } from 'vitest';
import {
  BOOTSTRAP_GROUP,
  bootstrapTokenId,
  bootstrapTokenSecret,
  bootstrapTokenSecretFrom,
  isOwnBootstrapToken,
  reusable,
  storedBootstrapToken,
  tokenExpiry,
} from '../../shared/decisions/bootstrap-token.js';

const nodeClaim = { name: 'default-x7k2p', uid: '5b1f7a0e-1111-4c3e-9d1a-0123456789ab' };
const now = new Date('2026-11-30T12:00:00Z');

function stored(stringData: Record<string, string>, ownerUid = nodeClaim.uid) {
  return storedBootstrapToken({
    type: 'bootstrap.kubernetes.io/token',
    data: Object.fromEntries(
      Object.entries(stringData).map(([k, v]) => [k, Buffer.from(v).toString('base64')]),
    ),
    metadata: { ownerReferences: [{ uid: ownerUid }] },
  });
}

describe('bootstrap tokens', () => {
  it('derives a 6-character id from the NodeClaim UID, the same on every retry', () => {
    expect(bootstrapTokenId(nodeClaim.uid)).toMatch(/^[a-z0-9]{6}$/);
    expect(bootstrapTokenId(nodeClaim.uid)).toBe(bootstrapTokenId(nodeClaim.uid));
    expect(bootstrapTokenId('another-uid')).not.toBe(bootstrapTokenId(nodeClaim.uid));
  });

  it('makes a 16-character secret of [a-z0-9] from random bytes, and refuses too few', () => {
    expect(bootstrapTokenSecretFrom(new Uint8Array(16).fill(255))).toMatch(/^[a-z0-9]{16}$/);
    expect(() => bootstrapTokenSecretFrom(new Uint8Array(8))).toThrow(RangeError);
  });

  it('expires just past the registration timeout', () => {
    expect(tokenExpiry(now, 15).toISOString()).toBe('2026-11-30T12:20:00.000Z');
  });

  it('is a bootstrap.kubernetes.io/token Secret in kube-system, owned by the NodeClaim, for authentication only', () => {
    const secret = bootstrapTokenSecret({
      nodeClaim,
      tokenId: 'abc123',
      tokenSecret: '0123456789abcdef',
      expiresAt: tokenExpiry(now, 15),
    });
    expect(secret).toEqual({
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'bootstrap.kubernetes.io/token',
      metadata: {
        name: 'bootstrap-token-abc123',
        namespace: 'kube-system',
        labels: {
          'karpenter.sh/nodeclaim': nodeClaim.name,
          'app.kubernetes.io/managed-by': 'nodeclaim-azure',
        },
        ownerReferences: [
          { apiVersion: 'karpenter.sh/v1', kind: 'NodeClaim', name: nodeClaim.name, uid: nodeClaim.uid },
        ],
      },
      stringData: {
        'token-id': 'abc123',
        'token-secret': '0123456789abcdef',
        expiration: '2026-11-30T12:20:00Z',
        'usage-bootstrap-authentication': 'true',
        'auth-extra-groups': BOOTSTRAP_GROUP,
        description: `bootstrap token of NodeClaim ${nodeClaim.name}`,
      },
    });
    expect(BOOTSTRAP_GROUP).toMatch(/^system:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]$/);
  });

  it.each([
    ['valid for the whole timeout', '2026-11-30T12:20:00Z', nodeClaim.uid, true],
    ['valid for less than the timeout', '2026-11-30T12:10:00Z', nodeClaim.uid, false],
    ['expired', '2026-11-30T11:00:00Z', nodeClaim.uid, false],
    ['owned by another NodeClaim of the same name', '2026-11-30T12:20:00Z', 'other-uid', false],
    ['without a parseable expiration', 'soon', nodeClaim.uid, false],
  ])('a stored token %s is reused: %s', (_name, expiration, ownerUid, expected) => {
    const token = stored({ 'token-id': 'abc123', 'token-secret': '0123456789abcdef', expiration }, ownerUid);
    expect(token && reusable(token, nodeClaim.uid, now, 15)).toBe(expected);
  });

  it('ignores Secrets that are not usable tokens', () => {
    expect(storedBootstrapToken({ type: 'Opaque', data: {} })).toBeUndefined();
    expect(stored({ 'token-id': 'abc123' })).toBeUndefined();
  });
});

describe('isOwnBootstrapToken', () => {
  const made = bootstrapTokenSecret({
    nodeClaim: { name: 'nc', uid: 'uid-1' },
    tokenId: 'abc123',
    tokenSecret: 'abcdefghijklmnop',
    expiresAt: new Date('2026-11-30T12:20:00Z'),
  });
  // As the API server returns it: stringData stored base64 under data.
  const asStored = (secret: typeof made) => ({
    type: secret.type,
    metadata: secret.metadata,
    data: Object.fromEntries(
      Object.entries(secret.stringData).map(([key, value]) => [key, Buffer.from(value).toString('base64')]),
    ),
  });

  it('is true for a Secret this app made', () => {
    expect(isOwnBootstrapToken(asStored(made))).toBe(true);
  });

  it.each([
    ['without the managed-by label', { ...made, metadata: { ...made.metadata, labels: {} } }],
    ['owned by something else', { ...made, metadata: { ...made.metadata, ownerReferences: [] } }],
    [
      'for another group',
      {
        ...made,
        stringData: {
          ...made.stringData,
          'auth-extra-groups': 'system:bootstrappers:kubeadm:default-node-token',
        },
      },
    ],
  ])('is false %s', (_what, secret) => {
    expect(isOwnBootstrapToken(asStored(secret as typeof made))).toBe(false);
  });
});
