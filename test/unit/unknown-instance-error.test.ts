import { describe, expect, test } from 'vitest';
import { isUnknownInstanceError } from '../../shared/runtime/azure-functions.js';

describe('isUnknownInstanceError', () => {
  test.each([
    {
      name: "the client's 404 for an unknown instance",
      error: new Error(
        'DurableClient error: Durable Functions extension replied with HTTP 404 response. This usually means we could not find any data associated with the instanceId provided: launch-1.',
      ),
      expected: true,
    },
    {
      name: 'a 500 whose instance ID contains 404',
      error: new Error(
        'DurableClient error: the Durable Functions extension replied with HTTP 500 for launch-404',
      ),
      expected: false,
    },
    {
      name: 'an empty 200',
      error: new Error(
        'DurableClient error: the Durable Functions extension replied with an empty HTTP 200 response.',
      ),
      expected: false,
    },
    { name: 'not an Error', error: 'HTTP 404 response', expected: false },
  ])('$name', ({ error, expected }) => {
    expect(isUnknownInstanceError(error)).toBe(expected);
  });
});
