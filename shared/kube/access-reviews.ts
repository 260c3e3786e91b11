// Asks the cluster's own authorizer whether a user may do something, with a SubjectAccessReview: how the
// explain functions apply the cluster's RBAC (Roles, ClusterRoles and their bindings, and whatever other
// authorizer the API server runs, such as AKS's Azure RBAC webhook) to the person asking, instead of
// keeping rules of their own. The review is created with the Function App's own identity, whose
// ClusterRole grants `create` on subjectaccessreviews and nothing else of authorization.k8s.io.
import { AuthorizationV1Api } from '@kubernetes/client-node';
import { makeTimedApiClient, type KubeClients } from './client.js';

/** A request as RBAC sees it: a verb on a resource (of an API group), in a namespace or cluster-wide. */
export interface ResourceAccess {
  verb: string;
  /** '' for the core API group. */
  group: string;
  resource: string;
  namespace?: string;
  name?: string;
}

/** Whom the review is about: a Kubernetes user name and the groups it belongs to. */
export interface ReviewedUser {
  username: string;
  groups: readonly string[];
  /** Extra attributes an authenticator attaches (AKS: the Entra object ID); webhook authorizers read them. */
  extra?: Readonly<Record<string, readonly string[]>>;
}

export interface AccessDecision {
  allowed: boolean;
  /** The authorizer's reason, when it gave one. */
  reason?: string;
  /** An authorizer that failed to evaluate (the decision is then a denial). */
  evaluationError?: string;
}

export interface AccessReviews {
  review(user: ReviewedUser, access: ResourceAccess): Promise<AccessDecision>;
}

export function kubeAccessReviews(kube: () => Promise<KubeClients>): AccessReviews {
  let api: { config: KubeClients['config']; client: AuthorizationV1Api } | undefined;
  const client = async (): Promise<AuthorizationV1Api> => {
    const { config } = await kube();
    // The clients are rebuilt when an Entra token is refreshed: follow their configuration.
    if (api?.config !== config) api = { config, client: makeTimedApiClient(config, AuthorizationV1Api) };
    return api.client;
  };
  return {
    async review(user, access) {
      const authorization = await client();
      const review = await authorization.createSubjectAccessReview({
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SubjectAccessReview',
          spec: {
            user: user.username,
            groups: [...user.groups],
            ...(user.extra
              ? {
                  extra: Object.fromEntries(
                    Object.entries(user.extra).map(([key, values]) => [key, [...values]]),
                  ),
                }
              : {}),
            resourceAttributes: {
              verb: access.verb,
              group: access.group,
              resource: access.resource,
              ...(access.namespace !== undefined ? { namespace: access.namespace } : {}),
              ...(access.name !== undefined ? { name: access.name } : {}),
            },
          },
        },
      });
      const status = review.status;
      return {
        allowed: status?.allowed === true && status.denied !== true,
        ...(status?.reason ? { reason: status.reason } : {}),
        ...(status?.evaluationError ? { evaluationError: status.evaluationError } : {}),
      };
    },
  };
}
