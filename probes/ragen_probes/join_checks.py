"""`python -m ragen_probes.join_checks <environment args> --then-allreduce <allreduce args>`

The checks after join in one Ray job: the environment probe (environment.py), then, only when every
node met the contract, the all-reduce (allreduce.py), on one driver's connection. One job instead of
two saves a job's start on the head (its supervisor, the driver's Python and `import ray`, the
connect) between the checks. Prints each check's result line as the check does on its own, and
exits with the environment probe's code when it failed, else with the all-reduce's.
"""

from __future__ import annotations

import sys

from . import allreduce, environment

SEPARATOR = "--then-allreduce"
EXIT_ARGS = 2


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if SEPARATOR not in argv:
        print(f"join_checks: the environment probe's arguments, {SEPARATOR}, then the all-reduce's", file=sys.stderr)
        return EXIT_ARGS
    split = argv.index(SEPARATOR)
    try:
        code = environment.main(argv[:split], keep_ray=True)
        if code != environment.EXIT_OK:
            return code  # an unmet contract or a silent node: the all-reduce would prove nothing
        return allreduce.main(argv[split + 1:])
    finally:
        import ray

        if ray.is_initialized():
            ray.shutdown()


if __name__ == "__main__":
    sys.exit(main())
