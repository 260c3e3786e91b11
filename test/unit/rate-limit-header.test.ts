import { describe, expect, test } from 'vitest';
import { shortWindowRemaining } from '../../shared/azure/compute-client.js';

describe('shortWindowRemaining', () => {
  test('takes the fewest requests left in any 3-minute window', () => {
    expect(
      shortWindowRemaining(
        'Microsoft.Compute/GetOperation3Min;1480,Microsoft.Compute/GetOperation30Min;14800,Microsoft.Compute/PutVM3Min;220',
      ),
    ).toBe(220);
  });
  test('ignores headers without a 3-minute window', () => {
    expect(shortWindowRemaining('Microsoft.Compute/GetOperation30Min;14800')).toBeUndefined();
    expect(shortWindowRemaining(undefined)).toBeUndefined();
  });
});
