// A Table Storage client from a connection string. Plain HTTP is allowed only where it cannot leave the
// machine or is the Storage emulator's: a loopback endpoint (Azurite in the local stack and tests) or
// Azurite's well-known account `devstoreaccount1` (Azurite in a container next to the app). Any other
// connection string keeps the SDK's default, which refuses to send credentials over plain HTTP, so a
// mistyped `http://` for a real account fails at once instead of leaking its key.
import { TableClient } from '@azure/data-tables';

const EMULATOR_ACCOUNT = 'devstoreaccount1';
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

export function tableClientFromConnectionString(connectionString: string, table: string): TableClient {
  return TableClient.fromConnectionString(connectionString, table, {
    allowInsecureConnection: isEmulatorConnectionString(connectionString),
  });
}

/** True for Azurite: `UseDevelopmentStorage=true`, the emulator account, or an endpoint on loopback. */
export function isEmulatorConnectionString(connectionString: string): boolean {
  const fields = new Map<string, string>();
  for (const part of connectionString.split(';')) {
    const separator = part.indexOf('=');
    if (separator > 0)
      fields.set(part.slice(0, separator).trim().toLowerCase(), part.slice(separator + 1).trim());
  }
  if (fields.get('usedevelopmentstorage')?.toLowerCase() === 'true') return true;
  if (fields.get('accountname') === EMULATOR_ACCOUNT) return true;
  const endpoint = fields.get('tableendpoint');
  if (endpoint === undefined) return false;
  try {
    return LOOPBACK_HOSTS.has(new URL(endpoint).hostname);
  } catch {
    return false;
  }
}
