import { ALLREDUCE_PROBE_MODULE, PROBE_PACKAGE } from '../ragen/entrypoint.js';
import { ENVIRONMENT_PROBE_MODULE } from './environment-probe.js';

export const JOIN_CHECKS_MODULE = `${PROBE_PACKAGE}.join_checks`;
/** Where the environment probe's arguments end and the all-reduce's begin (join_checks.py). */
export const THEN_ALLREDUCE = '--then-allreduce';

/** The arguments after `-m <module>` of a probe's argv. */
function argsAfterModule(argv: readonly string[], module: string): { interpreter: string[]; args: string[] } {
  const at = argv.indexOf(module);
  if (at < 1 || argv[at - 1] !== '-m')
    throw new Error(`not an argv of python -m ${module}: ${argv.join(' ')}`);
  return { interpreter: argv.slice(0, at - 1), args: argv.slice(at + 1) };
}

/**
 * The environment probe's and the all-reduce's argvs as one Ray job's (probes/ragen_probes/join_checks.py):
 * the probe, then the all-reduce only when every node met the contract, on one driver.
 */
export function joinChecksArgv(environment: readonly string[], allReduce: readonly string[]): string[] {
  const env = argsAfterModule(environment, ENVIRONMENT_PROBE_MODULE);
  const reduce = argsAfterModule(allReduce, ALLREDUCE_PROBE_MODULE);
  return [...env.interpreter, '-m', JOIN_CHECKS_MODULE, ...env.args, THEN_ALLREDUCE, ...reduce.args];
}
