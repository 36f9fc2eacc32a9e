"""Where the conformance suite finds RAGEN's and verl's real Hydra configuration, and how it checks it.

The configuration is an input of CI, never part of this repository. In order:
1. $RAGEN_CONFORMANCE_DIR (when set, the only place looked at: a wrong value is an error, not a
   reason to look elsewhere);
2. `shared/conformance` beside the repository (../shared/conformance), or in a folder above it;
3. the cache, $RAGEN_CACHE/conformance (default ~/.cache/ragen-orchestrator/conformance);
4. a fetch into that cache: the pinned commits of RAGEN and verl by git, only the files listed in
   conformance-files.sha256.
Whatever is found is checked against conformance-files.sha256 (sha256 of every file the suite
reads, at the pinned commits). Where nothing is found and the fetch fails (no network), the suite
fails naming the variable and the commits.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MANIFEST_FILE = Path(__file__).with_name("conformance-files.sha256")
RAGEN_CONFIG = "ragen-20daedc/config"
VERL_CONFIG = "verl-d62da49/verl/trainer/config"
RAGEN_COMMIT = "20daedc47558e000f7de912b060646bf2e8026bd"
# verl 0.6.1: RAGEN's verl submodule at 20daedc.
VERL_COMMIT = "d62da4950573d7a4b7ef2362337952e7ab59e78d"


@dataclass(frozen=True)
class Pinned:
    """One upstream repository at one commit, laid out under `folder` (its files keep their paths)."""

    folder: str
    url: str
    commit: str


PINNED = (
    Pinned("ragen-20daedc", "https://github.com/mll-lab-nu/RAGEN.git", RAGEN_COMMIT),
    Pinned("verl-d62da49", "https://github.com/volcengine/verl.git", VERL_COMMIT),
)


class ConformanceDataMissing(Exception):
    """The configuration is nowhere to be found, or not the pinned one; the message says what to do."""


def read_manifest(path: Path = MANIFEST_FILE) -> dict[str, str]:
    """`sha256sum` lines (hash, two spaces, path relative to the conformance folder) → {path: hash}."""
    manifest = {}
    for line in path.read_text().splitlines():
        if line.strip():
            digest, name = line.split(maxsplit=1)
            manifest[name] = digest
    return manifest


def default_cache(env: Mapping[str, str]) -> Path:
    # The same cache root as the Go builds (scripts/k8s/versions.sh).
    root = env.get("RAGEN_CACHE") or str(Path(env.get("HOME", str(Path.home()))) / ".cache" / "ragen-orchestrator")
    return Path(root) / "conformance"


def mismatches(folder: Path, manifest: Mapping[str, str]) -> list[str]:
    """Each listed file that is missing or whose sha256 differs, in words; empty when all match."""
    problems = []
    for name, digest in manifest.items():
        file = folder / name
        if not file.is_file():
            problems.append(f"{name} is missing")
        elif hashlib.sha256(file.read_bytes()).hexdigest() != digest:
            problems.append(f"{name} differs from the pinned commit (sha256)")
    return problems


def _commits(pinned: tuple[Pinned, ...]) -> str:
    return " and ".join(f"{p.url} at {p.commit} (as {p.folder}/)" for p in pinned)


def _verified(folder: Path, where: str, manifest: Mapping[str, str], pinned: tuple[Pinned, ...]) -> Path:
    problems = mismatches(folder, manifest) if folder.is_dir() else ["the folder does not exist"]
    if problems:
        shown = "; ".join(problems[:5]) + (f"; and {len(problems) - 5} more" if len(problems) > 5 else "")
        raise ConformanceDataMissing(
            f"RAGEN's real Hydra configuration in {folder} ({where}) is not the pinned one: {shown}. "
            f"It must hold {_commits(pinned)}, files as listed in {MANIFEST_FILE.name}"
        )
    return folder


def _git(args: list[str], cwd: Path) -> bytes:
    out = subprocess.run(
        ["git", *args],
        cwd=cwd,
        capture_output=True,
        timeout=600,
        check=False,
        env={**os.environ, "GIT_TERMINAL_PROMPT": "0"},
    )
    if out.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)}: {out.stderr.decode(errors='replace').strip()[-500:]}")
    return out.stdout


def fetch_pinned(dest: Path, manifest: Mapping[str, str], pinned: tuple[Pinned, ...] = PINNED) -> None:
    """
    Fetches each pinned commit (shallow, blobs on demand), writes the manifest's files of it under
    dest and checks them. git checks that the fetched objects hash to the commit id, which names the
    whole tree; the manifest then checks the very bytes the suite reads. dest appears only complete.
    """
    staging = Path(tempfile.mkdtemp(prefix=".conformance-", dir=dest.parent))
    try:
        for p in pinned:
            git_dir = staging / f".git-{p.folder}"
            git_dir.mkdir()
            _git(["init", "-q", "--bare"], git_dir)
            _git(["remote", "add", "origin", p.url], git_dir)
            _git(["fetch", "-q", "--depth", "1", "--filter=blob:none", "origin", p.commit], git_dir)
            got = _git(["rev-parse", "FETCH_HEAD"], git_dir).decode().strip()
            if got != p.commit:
                raise RuntimeError(f"{p.url} answered {got} for {p.commit}")
            prefix = f"{p.folder}/"
            for name in (n for n in manifest if n.startswith(prefix)):
                target = staging / name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(_git(["cat-file", "blob", f"{p.commit}:{name[len(prefix):]}"], git_dir))
            shutil.rmtree(git_dir)
        _verified(staging, "just fetched", manifest, pinned)
        staging.rename(dest)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def find_conformance_dir(
    env: Mapping[str, str] = os.environ,
    repo: Path = REPO,
    manifest: Mapping[str, str] | None = None,
    pinned: tuple[Pinned, ...] = PINNED,
) -> Path:
    """The checked folder (see the module's docstring), or ConformanceDataMissing saying what to do."""
    manifest = read_manifest() if manifest is None else manifest
    explicit = env.get("RAGEN_CONFORMANCE_DIR")
    if explicit:
        return _verified(Path(explicit), "RAGEN_CONFORMANCE_DIR", manifest, pinned)
    for parent in [repo.parent, *repo.parent.parents]:
        candidate = parent / "shared" / "conformance"
        if candidate.is_dir():
            return _verified(candidate, "shared/conformance beside the repository or above it", manifest, pinned)
    cache = default_cache(env)
    if cache.is_dir():
        return _verified(cache, "the cache", manifest, pinned)
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        fetch_pinned(cache, manifest, pinned)
    except (OSError, RuntimeError, subprocess.SubprocessError, ConformanceDataMissing) as e:
        raise ConformanceDataMissing(
            f"RAGEN's real Hydra configuration is missing: RAGEN_CONFORMANCE_DIR is unset, there is no "
            f"shared/conformance beside {repo} or above it, no cache at {cache}, and fetching it failed ({e}). "
            f"Set RAGEN_CONFORMANCE_DIR to a folder holding {_commits(pinned)}: "
            f"{RAGEN_CONFIG}/ and {VERL_CONFIG}/ as listed in test/conformance/{MANIFEST_FILE.name}"
        ) from e
    return cache
