import type { ResourceRule } from '../resource-rules.js';
import type { KubeTransport } from './transport.js';

/** What this identity may do in the namespace, asked of the API server (preflight.ts). */
export class AccessReviewsClient {
  constructor(private readonly transport: KubeTransport) {}

  /** The kubeconfig user, for messages. */
  get identity(): string {
    return this.transport.identity;
  }

  get namespace(): string {
    return this.transport.namespace;
  }

  /**
   * SelfSubjectRulesReview: what this identity may do in our namespace, in one request. Rules
   * `complete` only when every authorizer could list its rules (RBAC can; a webhook may not).
   */
  async namespaceRules(): Promise<{ rules: ResourceRule[]; complete: boolean }> {
    const review = await this.transport.call(
      { verb: 'create', resource: 'selfsubjectrulesreviews.authorization.k8s.io' },
      ({ authz }) =>
        authz.createSelfSubjectRulesReview({
          body: {
            apiVersion: 'authorization.k8s.io/v1',
            kind: 'SelfSubjectRulesReview',
            spec: { namespace: this.namespace },
          },
        }),
    );
    return { rules: review.status?.resourceRules ?? [], complete: review.status?.incomplete === false };
  }

  /** SelfSubjectAccessReview: may this identity `verb` the resource in our namespace? */
  async canI(verb: string, resource: string, group: string): Promise<{ allowed: boolean; reason: string }> {
    const review = await this.transport.call(
      { verb: 'create', resource: 'selfsubjectaccessreviews.authorization.k8s.io' },
      ({ authz }) =>
        authz.createSelfSubjectAccessReview({
          body: {
            apiVersion: 'authorization.k8s.io/v1',
            kind: 'SelfSubjectAccessReview',
            spec: { resourceAttributes: { namespace: this.namespace, verb, group, resource } },
          },
        }),
    );
    return { allowed: review.status?.allowed === true, reason: review.status?.reason ?? '' };
  }
}
