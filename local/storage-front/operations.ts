// Which permission Azure Storage checks for a request made with a Microsoft Entra token: the REST
// operation a method and URL name, the control action (`actions`) or data action (`dataActions`) it
// needs, and the resource it needs it on. The names are Microsoft's (the Storage provider's operations
// and the built-in roles' permissions, https://learn.microsoft.com/azure/role-based-access-control/permissions/storage,
// and the queue actions of https://learn.microsoft.com/azure/storage/queues/queues-auth-abac-attributes).
// Requests are path-style, as Azurite serves them: /<account>/<resource>...
//
// Where one operation may be granted by either of two permissions (Put Message by `messages/add/action`
// or by the wider `messages/write`), the requirement lists both; an upsert needs the right to insert and
// the right to update. An operation this file does not know is refused loudly (unknownOperation), so a
// new SDK call shows up as an error here instead of passing unchecked.

export type StorageService = 'queue' | 'table';

export type PermissionKind = 'action' | 'dataAction';

export interface RequiredPermission {
  /** The REST operation's name, as Microsoft's REST reference names it. */
  operation: string;
  kind: PermissionKind;
  /** Every inner list needs one of its permissions granted. */
  needs: readonly (readonly string[])[];
  /** Below the account: `queueServices/default/queues/<q>`, `tableServices/default/tables/<t>`, or a service. */
  resource: string;
}

export interface StorageRequestLine {
  method: string;
  /** The path below the account (`/q1/messages`, `/Tables`, `/t1(PartitionKey='p',RowKey='r')`), decoded. */
  path: string;
  query: URLSearchParams;
  /** Lower-cased header names. */
  headers: Readonly<Record<string, string | undefined>>;
  /** The request body (Create Table names its table there). */
  body?: string;
}

export class UnknownStorageOperation extends Error {
  override readonly name = 'UnknownStorageOperation';
}

const QUEUE = 'Microsoft.Storage/storageAccounts/queueServices';
const TABLE = 'Microsoft.Storage/storageAccounts/tableServices';

function unknownOperation(service: StorageService, line: StorageRequestLine): never {
  throw new UnknownStorageOperation(
    `the storage front does not know which permission ${line.method} ${line.path}?${line.query.toString()} (${service}) needs`,
  );
}

const control = (operation: string, action: string, resource: string): RequiredPermission => ({
  operation,
  kind: 'action',
  needs: [[action]],
  resource,
});

const data = (
  operation: string,
  needs: readonly (readonly string[])[],
  resource: string,
): RequiredPermission => ({
  operation,
  kind: 'dataAction',
  needs,
  resource,
});

export function requiredPermission(service: StorageService, line: StorageRequestLine): RequiredPermission {
  return service === 'queue' ? queuePermission(line) : tablePermission(line);
}

function queuePermission(line: StorageRequestLine): RequiredPermission {
  const method = line.method.toUpperCase();
  const comp = line.query.get('comp') ?? undefined;
  const segments = line.path.split('/').filter((segment) => segment !== '');
  const service = 'queueServices/default';

  if (segments.length === 0) {
    if (comp === 'list' && method === 'GET') return control('List Queues', `${QUEUE}/queues/read`, service);
    if (line.query.get('restype') === 'service' && comp === 'properties') {
      if (method === 'GET') return control('Get Queue Service Properties', `${QUEUE}/read`, service);
      if (method === 'PUT') return control('Set Queue Service Properties', `${QUEUE}/write`, service);
    }
    if (line.query.get('restype') === 'service' && comp === 'stats' && method === 'GET')
      return control('Get Queue Service Stats', `${QUEUE}/read`, service);
    return unknownOperation('queue', line);
  }

  const [queue, messages, messageId, ...rest] = segments;
  const resource = `${service}/queues/${queue ?? ''}`;
  if (messages === undefined) {
    if (comp === 'metadata') {
      if (method === 'GET' || method === 'HEAD')
        return control('Get Queue Metadata', `${QUEUE}/queues/read`, resource);
      if (method === 'PUT') return control('Set Queue Metadata', `${QUEUE}/queues/write`, resource);
    }
    if (comp === 'acl') {
      if (method === 'GET' || method === 'HEAD')
        return control('Get Queue ACL', `${QUEUE}/queues/getAcl/action`, resource);
      if (method === 'PUT') return control('Set Queue ACL', `${QUEUE}/queues/setAcl/action`, resource);
    }
    if (comp === undefined && method === 'PUT')
      return control('Create Queue', `${QUEUE}/queues/write`, resource);
    if (comp === undefined && method === 'DELETE')
      return control('Delete Queue', `${QUEUE}/queues/delete`, resource);
    return unknownOperation('queue', line);
  }
  if (messages !== 'messages' || rest.length > 0) return unknownOperation('queue', line);

  const message = (name: string): string => `${QUEUE}/queues/messages/${name}`;
  if (messageId === undefined) {
    if (method === 'POST') return data('Put Message', [[message('add/action'), message('write')]], resource);
    if (method === 'GET' && line.query.get('peekonly') === 'true')
      return data('Peek Messages', [[message('read')]], resource);
    if (method === 'GET') return data('Get Messages', [[message('process/action')]], resource);
    if (method === 'DELETE') return data('Clear Messages', [[message('delete')]], resource);
    return unknownOperation('queue', line);
  }
  if (method === 'DELETE') return data('Delete Message', [[message('process/action')]], resource);
  if (method === 'PUT') return data('Update Message', [[message('write')]], resource);
  return unknownOperation('queue', line);
}

// /Tables, /Tables('name'), /name, /name(), /name(PartitionKey='…',RowKey='…')
const tablesCollection = /^\/Tables$/i;
const namedTable = /^\/Tables\('([^']+)'\)$/i;
const entityPath = /^\/([A-Za-z][A-Za-z0-9]{2,62})(\((.*)\))?$/;

function tablePermission(line: StorageRequestLine): RequiredPermission {
  // Table clients tunnel MERGE through POST where a proxy would not pass it.
  const method = (line.headers['x-http-method'] ?? line.method).toUpperCase();
  const service = 'tableServices/default';
  const path = line.path.replace(/\/+$/, '') || '/';
  const comp = line.query.get('comp') ?? undefined;

  if (path === '/') {
    if (line.query.get('restype') === 'service' && comp === 'properties') {
      if (method === 'GET') return control('Get Table Service Properties', `${TABLE}/read`, service);
      if (method === 'PUT') return control('Set Table Service Properties', `${TABLE}/write`, service);
    }
    if (line.query.get('restype') === 'service' && comp === 'stats' && method === 'GET')
      return control('Get Table Service Stats', `${TABLE}/read`, service);
    return unknownOperation('table', line);
  }
  if (tablesCollection.test(path)) {
    if (method === 'GET') return control('Query Tables', `${TABLE}/tables/read`, service);
    if (method === 'POST') {
      const name = createdTableName(line.body);
      if (name === undefined) return unknownOperation('table', line);
      return control('Create Table', `${TABLE}/tables/write`, `${service}/tables/${name}`);
    }
    return unknownOperation('table', line);
  }
  const named = namedTable.exec(path);
  if (named) {
    const resource = `${service}/tables/${named[1] ?? ''}`;
    if (method === 'DELETE') return control('Delete Table', `${TABLE}/tables/delete`, resource);
    if (method === 'GET') return control('Query Tables', `${TABLE}/tables/read`, resource);
    return unknownOperation('table', line);
  }
  const entity = entityPath.exec(path);
  if (!entity) return unknownOperation('table', line);
  const resource = `${service}/tables/${entity[1] ?? ''}`;
  const entities = (name: string): string => `${TABLE}/tables/entities/${name}`;
  const insert = [entities('add/action'), entities('write')];
  const update = [entities('update/action'), entities('write')];
  const keys = entity[3];

  if (comp === 'acl') {
    if (method === 'GET' || method === 'HEAD')
      return control('Get Table ACL', `${TABLE}/tables/getAcl/action`, resource);
    if (method === 'PUT') return control('Set Table ACL', `${TABLE}/tables/setAcl/action`, resource);
    return unknownOperation('table', line);
  }
  if (method === 'GET') return data('Query Entities', [[entities('read')]], resource);
  if (keys === undefined || keys === '') {
    if (method === 'POST') return data('Insert Entity', [insert], resource);
    return unknownOperation('table', line);
  }
  // With If-Match the entity must exist (Update/Merge Entity); without it the call is an upsert.
  const conditional = line.headers['if-match'] !== undefined;
  if (method === 'PUT')
    return conditional
      ? data('Update Entity', [update], resource)
      : data('Insert Or Replace Entity', [insert, update], resource);
  if (method === 'MERGE')
    return conditional
      ? data('Merge Entity', [update], resource)
      : data('Insert Or Merge Entity', [insert, update], resource);
  if (method === 'DELETE') return data('Delete Entity', [[entities('delete')]], resource);
  return unknownOperation('table', line);
}

function createdTableName(body: string | undefined): string | undefined {
  if (!body) return undefined;
  try {
    const parsed = JSON.parse(body) as { TableName?: unknown };
    return typeof parsed.TableName === 'string' && parsed.TableName !== '' ? parsed.TableName : undefined;
  } catch {
    return undefined;
  }
}
