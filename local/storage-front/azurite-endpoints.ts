// What the storage front needs of an Azurite it fronts, read from Azurite's connection string (the form
// the test run's shared Azurite is handed around in): the account, its key and the service endpoints.
import type { AzuriteBehindFront } from './server.js';

export function azuriteFromConnectionString(connectionString: string): AzuriteBehindFront {
  const fields = new Map<string, string>();
  for (const part of connectionString.split(';')) {
    const separator = part.indexOf('=');
    if (separator > 0)
      fields.set(part.slice(0, separator).trim().toLowerCase(), part.slice(separator + 1).trim());
  }
  const field = (name: string): string => {
    const value = fields.get(name.toLowerCase());
    if (!value) throw new Error(`the Azurite connection string has no ${name}`);
    return value;
  };
  return {
    accountName: field('AccountName'),
    accountKey: field('AccountKey'),
    queueEndpoint: field('QueueEndpoint').replace(/\/+$/, ''),
    tableEndpoint: field('TableEndpoint').replace(/\/+$/, ''),
  };
}
