/** A namespaced rule as SelfSubjectRulesReview returns it (authorization.k8s.io/v1 ResourceRule). */
export interface ResourceRule {
  apiGroups?: string[];
  resources?: string[];
  verbs: string[];
  resourceNames?: string[];
}

const covers = (list: readonly string[] | undefined, value: string) =>
  (list ?? []).some((v) => v === '*' || v === value);

/**
 * Whether the rules grant `verb` on every object of `resource`: a rule limited to resourceNames
 * grants only those objects (a create or list names none), so it never counts here.
 */
export function rulesAllow(
  rules: readonly ResourceRule[],
  verb: string,
  resource: string,
  group: string,
): boolean {
  return rules.some(
    (r) =>
      !r.resourceNames?.length &&
      covers(r.apiGroups, group) &&
      covers(r.resources, resource) &&
      covers(r.verbs, verb),
  );
}
