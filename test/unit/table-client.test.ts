import { describe, expect, test } from 'vitest';
import { isEmulatorConnectionString } from '../../shared/azure/table-client.js';

describe('isEmulatorConnectionString: plain HTTP only for Azurite', () => {
  test.each([
    ['UseDevelopmentStorage=true', true],
    [
      'DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=a2V5;TableEndpoint=http://azurite:10002/devstoreaccount1;',
      true,
    ],
    [
      'DefaultEndpointsProtocol=http;AccountName=local;AccountKey=a2V5;TableEndpoint=http://127.0.0.1:10002/local;',
      true,
    ],
    [
      'DefaultEndpointsProtocol=http;AccountName=local;AccountKey=a2V5;TableEndpoint=http://localhost:10002/local;',
      true,
    ],
    [
      'DefaultEndpointsProtocol=http;AccountName=local;AccountKey=a2V5;TableEndpoint=http://[::1]:10002/local;',
      true,
    ],
    ['DefaultEndpointsProtocol=https;AccountName=app;AccountKey=a2V5;EndpointSuffix=core.windows.net', false],
    [
      'DefaultEndpointsProtocol=http;AccountName=app;AccountKey=a2V5;TableEndpoint=http://app.table.core.windows.net/;',
      false,
    ],
    ['DefaultEndpointsProtocol=http;AccountName=app;AccountKey=a2V5;TableEndpoint=not a url;', false],
  ])('%s → %s', (connectionString, expected) => {
    expect(isEmulatorConnectionString(connectionString)).toBe(expected);
  });
});
