// Who an Entra ID token's bearer is to the cluster's RBAC: the Kubernetes user name and groups AKS gives
// the same person when they use kubectl with Entra ID integration, so that the Roles and bindings the
// cluster already has decide what the explain functions show them, with no second list of who may see
// what. docs/explain.md spells out the mapping and where it can differ from AKS's.
import type { EntraClaims } from '../azure/entra-token.js';
import type { ReviewedUser } from '../kube/access-reviews.js';

/** Every authenticated request carries this group (the API server adds it; a review must name it). */
export const AUTHENTICATED_GROUP = 'system:authenticated';
/** The extra attribute AKS's Entra authentication attaches: the principal's object ID. */
export const OBJECT_ID_EXTRA = 'oid';

export interface KubernetesIdentity extends ReviewedUser {
  /** `user` (a person: UPN / preferred_username) or `app` (a service principal: its object ID). */
  kind: 'user' | 'app';
  /**
   * The token carried no group list because the user is in too many groups (Entra's "overage"): AKS
   * would read the groups from Microsoft Graph; this app does not, so bindings to groups are not seen.
   */
  groupsOverage: boolean;
}

/**
 * The Kubernetes user of a verified token, as AKS names it: a user by `upn` (v1.0 tokens) or else
 * `preferred_username` (v2.0), an application (`idtyp` "app", or a token naming no user) by its object
 * ID; groups by the object IDs of the `groups` claim, plus system:authenticated. Undefined when the token
 * names neither a user nor an object ID.
 */
export function kubernetesIdentityOf(claims: EntraClaims): KubernetesIdentity | undefined {
  const userName = claims.identityType === 'app' ? undefined : (claims.upn ?? claims.preferredUsername);
  const username = userName ?? claims.objectId;
  if (username === undefined) return undefined;
  return {
    kind: userName === undefined ? 'app' : 'user',
    username,
    groups: [...new Set([...claims.groups, AUTHENTICATED_GROUP])],
    ...(claims.objectId ? { extra: { [OBJECT_ID_EXTRA]: [claims.objectId] } } : {}),
    groupsOverage: claims.groupsOverage,
  };
}
