import { AccountNameSchema } from '../spec/experiment.js';

/** The team of a run whose spec and command line name none. */
export const DEFAULT_TEAM = 'default';

export interface Ownership {
  owner: string;
  team: string;
}

/**
 * Who a run is for: the command line's --owner/--team over the spec's owner/team, else the OS user
 * and team `default`. Validated here, before anything starts: a bad value names its flag.
 */
export function resolveOwnership(
  spec: Partial<Ownership>,
  flags: Partial<Ownership>,
  osUser: () => string,
): Ownership {
  const pick = (
    flag: string | undefined,
    fromSpec: string | undefined,
    fallback: () => string,
    name: string,
  ) => {
    const value = flag ?? fromSpec ?? fallback();
    const parsed = AccountNameSchema.safeParse(value);
    if (!parsed.success)
      throw new Error(
        `${flag !== undefined ? `--${name}` : fromSpec !== undefined ? `spec ${name}` : `the OS user (${name})`} "${value}": ${parsed.error.issues[0]?.message}${flag === undefined && fromSpec === undefined ? `; pass --${name}` : ''}`,
      );
    return parsed.data;
  };
  return {
    owner: pick(flags.owner, spec.owner, osUser, 'owner'),
    team: pick(flags.team, spec.team, () => DEFAULT_TEAM, 'team'),
  };
}

/** The spec with its owner and team resolved (the form every start carries). */
export function withOwnership<S extends Partial<Ownership>>(
  spec: S,
  flags: Partial<Ownership>,
  osUser: () => string,
): S & Ownership {
  return { ...spec, ...resolveOwnership(spec, flags, osUser) };
}
