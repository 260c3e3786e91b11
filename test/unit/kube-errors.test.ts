// The two 409s of the Kubernetes API are different answers: a create that found the name taken
// (AlreadyExists: adopt what is there) and a stale write (Conflict: re-read, decide again). Retrying a
// create as if it were stale, or adopting after a stale write, would be wrong, so they are told apart by
// the Status body's reason, and only an error without one counts as either.
import { ApiException } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { isAlreadyExists, isConflict, kubeErrorMessage, statusReasonOf } from '../../shared/kube/errors.js';

const status = (code: number, reason: string, message: string): ApiException<string> =>
  new ApiException(
    code,
    `HTTP-Code: ${code}`,
    JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason, message, code }),
    {},
  );

describe('Kubernetes 409s', () => {
  it('tells AlreadyExists from Conflict by the Status reason', () => {
    const exists = status(409, 'AlreadyExists', 'nodeclaims.karpenter.sh "a" already exists');
    const stale = status(
      409,
      'Conflict',
      'Operation cannot be fulfilled on nodeclaims.karpenter.sh "a": the object has been modified',
    );
    expect([isAlreadyExists(exists), isConflict(exists)]).toEqual([true, false]);
    expect([isAlreadyExists(stale), isConflict(stale)]).toEqual([false, true]);
    expect(statusReasonOf(exists)).toBe('AlreadyExists');
    expect(kubeErrorMessage(stale)).toContain('the object has been modified');
  });

  it('counts a 409 without a Status body as either, and nothing else as one', () => {
    const bare = Object.assign(new Error('409'), { code: 409 });
    expect([isAlreadyExists(bare), isConflict(bare)]).toEqual([true, true]);
    const missing = status(404, 'NotFound', 'not found');
    expect([isAlreadyExists(missing), isConflict(missing)]).toEqual([false, false]);
    expect(kubeErrorMessage(new Error('plain'))).toBe('plain');
  });
});
