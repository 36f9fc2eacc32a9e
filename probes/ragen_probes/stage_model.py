"""`python -m ragen_probes.stage_model --hub org/name --revision <40-hex> --hf-home DIR`

Stages a pinned Hugging Face model revision into HF_HOME on shared storage with huggingface_hub's
snapshot_download (it honours HF_ENDPOINT and HF_TOKEN from the environment), so that every node
then loads it offline (HF_HUB_OFFLINE=1) from `<DIR>/hub/models--org--name/snapshots/<revision>`.
Runs on the orchestrator's worker, which mounts the same storage (it is zipped with the probe
package, but no cluster job runs it). Prints one line `STAGED {"path", "revision", "files"}`. Exit codes: 0 staged (or already there);
2 bad arguments or huggingface_hub missing; 3 the hub could not be reached (a retry may work);
4 the repository or revision does not exist, or access was refused.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys

EXIT_OK, EXIT_ARGS, EXIT_UNREACHABLE, EXIT_REFUSED = 0, 2, 3, 4


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m ragen_probes.stage_model")
    p.add_argument("--hub", required=True)
    p.add_argument("--revision", required=True)
    p.add_argument("--hf-home", required=True)
    args = p.parse_args(argv)
    if not re.fullmatch(r"[0-9a-f]{40}", args.revision) or not os.path.isabs(args.hf_home):
        print("stage_model: --revision must be a 40-hex commit and --hf-home an absolute path", file=sys.stderr)
        return EXIT_ARGS
    try:
        from huggingface_hub import snapshot_download
        from huggingface_hub.errors import GatedRepoError, RepositoryNotFoundError, RevisionNotFoundError
    except ImportError as err:
        print(f"stage_model: huggingface_hub is not installed in {sys.executable}: {err}", file=sys.stderr)
        return EXIT_ARGS
    os.environ.pop("HF_HUB_OFFLINE", None)  # staging is the one step that goes online
    try:
        path = snapshot_download(repo_id=args.hub, revision=args.revision, cache_dir=os.path.join(args.hf_home, "hub"))
    except (RepositoryNotFoundError, RevisionNotFoundError, GatedRepoError) as err:
        print(f"stage_model: {type(err).__name__}: {str(err).splitlines()[0]}", file=sys.stderr)
        return EXIT_REFUSED
    except Exception as err:  # connection errors, 5xx: the caller retries
        print(f"stage_model: {type(err).__name__}: {err}", file=sys.stderr)
        return EXIT_UNREACHABLE
    files = sorted(os.path.relpath(os.path.join(d, f), path) for d, _, fs in os.walk(path) for f in fs)
    print("STAGED " + json.dumps({"path": path, "revision": args.revision, "files": files}), flush=True)
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
