import { userInfo } from 'node:os';
import { type Ownership, withOwnership } from '../domain/usage/ownership.js';
import { UsageError } from '../config/user-errors.js';

/** --owner and --team as a start command hands them over. */
export type Who = Partial<Ownership>;

/** The spec with owner and team resolved; a bad value exits 2 naming its flag, before anything starts. */
export function owned<S extends Partial<Ownership>>(spec: S, who: Who): S & Ownership {
  try {
    return withOwnership(spec, who, () => userInfo().username);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}
