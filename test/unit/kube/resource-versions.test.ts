// resourceVersions of one type are ordered as Kubernetes 1.35 defines it (KEP-5504): decimal integers,
// the longer the newer; anything else is not compared, so the caller reads in a way that needs no order.
import { describe, expect, test } from 'vitest';
import { compareResourceVersions } from '../../../shared/kube/resource-versions.js';

describe('compareResourceVersions', () => {
  test('orders decimal versions numerically, not as text', () => {
    expect(compareResourceVersions('99', '100')).toBeLessThan(0);
    expect(compareResourceVersions('100', '99')).toBeGreaterThan(0);
    expect(compareResourceVersions('123456', '123457')).toBeLessThan(0);
    expect(compareResourceVersions('123457', '123457')).toBe(0);
  });

  test('does not compare what is not a plain decimal', () => {
    expect(compareResourceVersions('', '1')).toBeUndefined();
    expect(compareResourceVersions('012', '12')).toBeUndefined();
    expect(compareResourceVersions('a1', '2')).toBeUndefined();
    expect(compareResourceVersions('1', '1.5')).toBeUndefined();
  });
});
