import { describe, expect, it } from 'vitest';
import {
  BOOTSTRAP_GROUP,
  bootstrapTokenId,
  bootstrapTokenSecret,
  bootstrapTokenIdOf,
  BOOTSTRAP_TOKEN_SECRET_NAME_PATTERN,
  bootstrapTokenSecretFrom,
  LAUNCH_ATTEMPT_ANNOTATION,
  tokenExpiry,
} from '../../shared/cloudprovider/azure/decisions/bootstrap-token.js';

const nodeClaim = { name: 'default-x7k2p', uid: '5b1f7a0e-1111-4c3e-9d1a-0123456789ab' };
const now = new Date('2026-11-30T12:00:00Z');

describe('bootstrap tokens', () => {
  it('derives a 6-character id from the NodeClaim UID and its launch attempt: one token per attempt', () => {
    const first = bootstrapTokenId(nodeClaim.uid, 'invocation-1');
    expect(first).toMatch(/^[a-z0-9]{6}$/);
    expect(bootstrapTokenId(nodeClaim.uid, 'invocation-1')).toBe(first);
    expect(bootstrapTokenId(nodeClaim.uid, 'invocation-2')).not.toBe(first);
    expect(bootstrapTokenId('another-uid', 'invocation-1')).not.toBe(first);
    // The attempt the NodeClaim carries now (registration deletes that one's token).
    const claimed = {
      metadata: { uid: nodeClaim.uid, annotations: { [LAUNCH_ATTEMPT_ANNOTATION]: 'invocation-1' } },
    };
    expect(bootstrapTokenIdOf(claimed)).toBe(first);
    expect(bootstrapTokenIdOf({ metadata: { uid: nodeClaim.uid } })).toBe(bootstrapTokenId(nodeClaim.uid));
    expect(`bootstrap-token-${first}`).toMatch(BOOTSTRAP_TOKEN_SECRET_NAME_PATTERN);
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
});
