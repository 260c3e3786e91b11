// The storage front's request → permission table and its RBAC decision: every queue and table call the
// app, the bridge and the local host make maps to the action Azure Storage checks, at the resource it
// checks it on; the shipped roles of infra/azure-roles.json grant exactly what each identity uses.
import { describe, expect, it } from 'vitest';
import { decide, type StoragePrincipal } from '../../local/storage-front/authorization.js';
import {
  requiredPermission,
  UnknownStorageOperation,
  type StorageRequestLine,
  type StorageService,
} from '../../local/storage-front/operations.js';
import {
  localStorageAccountId,
  shippedStoragePrincipal,
} from '../../local/stack/storage-role-assignments.js';

const line = (
  method: string,
  path: string,
  query = '',
  headers: Record<string, string> = {},
  body?: string,
): StorageRequestLine => ({
  method,
  path,
  query: new URLSearchParams(query),
  headers,
  ...(body ? { body } : {}),
});

const QUEUES = 'Microsoft.Storage/storageAccounts/queueServices';
const TABLES = 'Microsoft.Storage/storageAccounts/tableServices';

describe('queue operations', () => {
  const cases: [string, StorageRequestLine, string, 'action' | 'dataAction', string[][], string][] = [
    ['Create Queue', line('PUT', '/q1'), 'Create Queue', 'action', [[`${QUEUES}/queues/write`]], 'queues/q1'],
    [
      'Delete Queue',
      line('DELETE', '/q1'),
      'Delete Queue',
      'action',
      [[`${QUEUES}/queues/delete`]],
      'queues/q1',
    ],
    [
      'Get Queue Metadata (getProperties, the old probe)',
      line('GET', '/q1', 'comp=metadata'),
      'Get Queue Metadata',
      'action',
      [[`${QUEUES}/queues/read`]],
      'queues/q1',
    ],
    [
      'Set Queue Metadata',
      line('PUT', '/q1', 'comp=metadata'),
      'Set Queue Metadata',
      'action',
      [[`${QUEUES}/queues/write`]],
      'queues/q1',
    ],
    [
      'Get Queue ACL',
      line('GET', '/q1', 'comp=acl'),
      'Get Queue ACL',
      'action',
      [[`${QUEUES}/queues/getAcl/action`]],
      'queues/q1',
    ],
    [
      'Put Message',
      line('POST', '/q1/messages'),
      'Put Message',
      'dataAction',
      [[`${QUEUES}/queues/messages/add/action`, `${QUEUES}/queues/messages/write`]],
      'queues/q1',
    ],
    [
      'Peek Messages',
      line('GET', '/q1/messages', 'peekonly=true'),
      'Peek Messages',
      'dataAction',
      [[`${QUEUES}/queues/messages/read`]],
      'queues/q1',
    ],
    [
      'Get Messages',
      line('GET', '/q1/messages', 'numofmessages=32'),
      'Get Messages',
      'dataAction',
      [[`${QUEUES}/queues/messages/process/action`]],
      'queues/q1',
    ],
    [
      'Clear Messages',
      line('DELETE', '/q1/messages'),
      'Clear Messages',
      'dataAction',
      [[`${QUEUES}/queues/messages/delete`]],
      'queues/q1',
    ],
    [
      'Delete Message',
      line('DELETE', '/q1/messages/m1', 'popreceipt=x'),
      'Delete Message',
      'dataAction',
      [[`${QUEUES}/queues/messages/process/action`]],
      'queues/q1',
    ],
    [
      'Update Message',
      line('PUT', '/q1/messages/m1', 'popreceipt=x&visibilitytimeout=1'),
      'Update Message',
      'dataAction',
      [[`${QUEUES}/queues/messages/write`]],
      'queues/q1',
    ],
    ['List Queues', line('GET', '/', 'comp=list'), 'List Queues', 'action', [[`${QUEUES}/queues/read`]], ''],
    [
      'Get Queue Service Properties',
      line('GET', '/', 'restype=service&comp=properties'),
      'Get Queue Service Properties',
      'action',
      [[`${QUEUES}/read`]],
      '',
    ],
  ];
  it.each(cases)('%s', (_name, request, operation, kind, needs, resource) => {
    const permission = requiredPermission('queue', request);
    expect(permission).toEqual({
      operation,
      kind,
      needs,
      resource: resource === '' ? 'queueServices/default' : `queueServices/default/${resource}`,
    });
  });
});

describe('table operations', () => {
  const entity = "/offerings(PartitionKey='blocks',RowKey='a%2Fb')";
  const cases: [string, StorageRequestLine, string, 'action' | 'dataAction', string[][], string][] = [
    ['Query Tables', line('GET', '/Tables'), 'Query Tables', 'action', [[`${TABLES}/tables/read`]], ''],
    [
      'Create Table (its name from the body)',
      line('POST', '/Tables', '', {}, '{"TableName":"offerings"}'),
      'Create Table',
      'action',
      [[`${TABLES}/tables/write`]],
      'tables/offerings',
    ],
    [
      'Delete Table',
      line('DELETE', "/Tables('offerings')"),
      'Delete Table',
      'action',
      [[`${TABLES}/tables/delete`]],
      'tables/offerings',
    ],
    [
      'Query Entities',
      line('GET', '/offerings()', '$filter=x'),
      'Query Entities',
      'dataAction',
      [[`${TABLES}/tables/entities/read`]],
      'tables/offerings',
    ],
    [
      'Query Entities (no parentheses)',
      line('GET', '/offerings'),
      'Query Entities',
      'dataAction',
      [[`${TABLES}/tables/entities/read`]],
      'tables/offerings',
    ],
    [
      'Insert Entity',
      line('POST', '/offerings'),
      'Insert Entity',
      'dataAction',
      [[`${TABLES}/tables/entities/add/action`, `${TABLES}/tables/entities/write`]],
      'tables/offerings',
    ],
    [
      'Insert Or Replace Entity (upsert: insert and update)',
      line('PUT', entity),
      'Insert Or Replace Entity',
      'dataAction',
      [
        [`${TABLES}/tables/entities/add/action`, `${TABLES}/tables/entities/write`],
        [`${TABLES}/tables/entities/update/action`, `${TABLES}/tables/entities/write`],
      ],
      'tables/offerings',
    ],
    [
      'Update Entity (If-Match)',
      line('PUT', entity, '', { 'if-match': '*' }),
      'Update Entity',
      'dataAction',
      [[`${TABLES}/tables/entities/update/action`, `${TABLES}/tables/entities/write`]],
      'tables/offerings',
    ],
    [
      'Insert Or Merge Entity (MERGE tunnelled through POST)',
      line('POST', entity, '', { 'x-http-method': 'MERGE' }),
      'Insert Or Merge Entity',
      'dataAction',
      [
        [`${TABLES}/tables/entities/add/action`, `${TABLES}/tables/entities/write`],
        [`${TABLES}/tables/entities/update/action`, `${TABLES}/tables/entities/write`],
      ],
      'tables/offerings',
    ],
    [
      'Delete Entity',
      line('DELETE', entity, '', { 'if-match': '*' }),
      'Delete Entity',
      'dataAction',
      [[`${TABLES}/tables/entities/delete`]],
      'tables/offerings',
    ],
  ];
  it.each(cases)('%s', (_name, request, operation, kind, needs, resource) => {
    expect(requiredPermission('table', request)).toEqual({
      operation,
      kind,
      needs,
      resource: resource === '' ? 'tableServices/default' : `tableServices/default/${resource}`,
    });
  });
});

describe('a request the table does not know is refused, not passed unchecked', () => {
  it.each<[StorageService, StorageRequestLine]>([
    ['queue', line('POST', '/q1')],
    ['queue', line('GET', '/q1/messages/m1/extra')],
    ['queue', line('PATCH', '/q1/messages')],
    ['table', line('POST', '/$batch')],
    ['table', line('POST', '/Tables', '', {}, 'not json')],
    ['table', line('PATCH', "/t1(PartitionKey='p',RowKey='r')")],
  ])('%s %o', (service, request) => {
    expect(() => requiredPermission(service, request)).toThrow(UnknownStorageOperation);
  });
});

describe('the shipped roles, as the front decides them', () => {
  const accountId = localStorageAccountId('devstoreaccount1');
  const where = { accountId, eventsQueue: 'events' };
  const bridge = shippedStoragePrincipal('bridge', where);
  const functions = shippedStoragePrincipal('functionApp', where);
  const allowed = (
    principal: StoragePrincipal,
    service: StorageService,
    request: StorageRequestLine,
    account = accountId,
  ) => decide(principal, requiredPermission(service, request), account).allowed;

  it('the bridge may send to the events queue, and nothing else', () => {
    expect(allowed(bridge, 'queue', line('POST', '/events/messages'))).toBe(true);
    // The probe it used to make: a control action Message Sender does not hold.
    expect(allowed(bridge, 'queue', line('GET', '/events', 'comp=metadata'))).toBe(false);
    expect(allowed(bridge, 'queue', line('GET', '/events/messages'))).toBe(false);
    expect(allowed(bridge, 'queue', line('GET', '/events/messages', 'peekonly=true'))).toBe(false);
    expect(allowed(bridge, 'queue', line('PUT', '/events'))).toBe(false);
    // Just outside its scope: the poison queue next to it, another queue, another account.
    expect(allowed(bridge, 'queue', line('POST', '/events-poison/messages'))).toBe(false);
    expect(allowed(bridge, 'queue', line('POST', '/other/messages'))).toBe(false);
    expect(allowed(bridge, 'queue', line('POST', '/events/messages'), localStorageAccountId('other'))).toBe(
      false,
    );
    expect(allowed(bridge, 'table', line('GET', '/offerings()'))).toBe(false);
  });

  it("names what is missing: the data action Message Sender's one permission would grant", () => {
    const decision = decide(bridge, requiredPermission('queue', line('GET', '/events/messages')), accountId);
    expect(decision).toEqual({
      allowed: false,
      missing: [`${QUEUES}/queues/messages/process/action`],
    });
  });

  it('the Function App may do what the host and the app do, on every queue and table of its account', () => {
    for (const request of [
      line('PUT', '/events'),
      line('GET', '/events/messages'),
      line('DELETE', '/events/messages/m1', 'popreceipt=p'),
      line('PUT', '/events/messages/m1', 'popreceipt=p&visibilitytimeout=1'),
      line('POST', '/events-poison/messages'),
      line('PUT', '/events-poison'),
    ])
      expect(allowed(functions, 'queue', request), `${request.method} ${request.path}`).toBe(true);
    for (const request of [
      line('POST', '/Tables', '', {}, '{"TableName":"offerings"}'),
      line('PUT', "/offerings(PartitionKey='p',RowKey='r')"),
      line('GET', '/offerings()'),
      line('DELETE', "/offerings(PartitionKey='p',RowKey='r')", '', { 'if-match': '*' }),
    ])
      expect(allowed(functions, 'table', request), `${request.method} ${request.path}`).toBe(true);
  });

  it('the Function App is refused outside its account and for what none of its roles holds', () => {
    const other = localStorageAccountId('otheraccount');
    expect(allowed(functions, 'queue', line('POST', '/events/messages'), other)).toBe(false);
    expect(allowed(functions, 'table', line('GET', '/offerings()'), other)).toBe(false);
    // Queue and table ACLs and the services' properties: no role of the app holds them.
    expect(allowed(functions, 'queue', line('PUT', '/events', 'comp=acl'))).toBe(false);
    expect(allowed(functions, 'queue', line('PUT', '/', 'restype=service&comp=properties'))).toBe(false);
    expect(allowed(functions, 'table', line('PUT', '/offerings', 'comp=acl'))).toBe(false);
  });

  it('a role without its one data action grants nothing (the mutation the bridge test runs)', () => {
    const lacking = shippedStoragePrincipal('bridge', where, {
      role: 'Storage Queue Data Message Sender',
      permission: `${QUEUES}/queues/messages/add/action`,
    });
    expect(allowed(lacking, 'queue', line('POST', '/events/messages'))).toBe(false);
  });
});
