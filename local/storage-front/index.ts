// Public entry point of the authorizing storage front (Azurite behind Microsoft Entra authorization).

export {
  fixedTokenCredential,
  startStorageFront,
  type AzuriteBehindFront,
  type StorageDecisionRecord,
  type StorageFront,
  type StorageFrontOptions,
} from './server.js';
export {
  decide,
  resourceScope,
  type StorageDecision,
  type StoragePrincipal,
  type StorageRoleAssignment,
} from './authorization.js';
export {
  requiredPermission,
  UnknownStorageOperation,
  type RequiredPermission,
  type StorageService,
} from './operations.js';
export { azuriteFromConnectionString } from './azurite-endpoints.js';
