"""Where the suite finds its data, in which order, how it checks it, and what it says when it cannot.

Upstream repositories here are real git repositories made by the test (file:// URLs): the fetch
runs the same git commands as against GitHub, only the URL differs.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

import pytest

from conformance_location import (
    PINNED,
    ConformanceDataMissing,
    Pinned,
    default_cache,
    fetch_pinned,
    find_conformance_dir,
    read_manifest,
)

FILES = {"up-a/config/base.yaml": b"a: 1\n", "up-a/LICENSE": b"MIT\n", "up-b/verl/x.yaml": b"b: 2\n"}
MANIFEST = {name: hashlib.sha256(data).hexdigest() for name, data in FILES.items()}


def git(cwd: Path, *args: str) -> str:
    out = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True, capture_output=True
    )
    return out.stdout.decode().strip()


def upstream(root: Path, folder: str, files: dict[str, bytes]) -> Pinned:
    """A git repository holding the files of `folder` (paths without the folder), one commit."""
    repo = root / f"upstream-{folder}"
    repo.mkdir(parents=True)
    git(repo, "init", "-q")
    for name, data in files.items():
        if name.startswith(f"{folder}/"):
            (repo / name[len(folder) + 1 :]).parent.mkdir(parents=True, exist_ok=True)
            (repo / name[len(folder) + 1 :]).write_bytes(data)
    (repo / "unlisted.txt").write_text("not in the manifest: never copied\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "upstream")
    return Pinned(folder, repo.as_uri(), git(repo, "rev-parse", "HEAD"))


def populated(folder: Path, files: dict[str, bytes] = FILES) -> Path:
    for name, data in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    return folder


@pytest.fixture
def layout(tmp_path: Path) -> dict[str, Path]:
    """A repository in tmp/work/repo, the shared folder beside it, a cache and an explicit folder."""
    repo = tmp_path / "work" / "repo"
    repo.mkdir(parents=True)
    return {
        "repo": repo,
        "shared": tmp_path / "work" / "shared" / "conformance",
        "cache_root": tmp_path / "cache",
        "explicit": tmp_path / "explicit",
        "tmp": tmp_path,
    }


def find(layout: dict[str, Path], explicit: bool = False, pinned: tuple[Pinned, ...] = ()) -> Path:
    env = {"RAGEN_CACHE": str(layout["cache_root"]), "HOME": str(layout["tmp"])}
    if explicit:
        env["RAGEN_CONFORMANCE_DIR"] = str(layout["explicit"])
    unreachable = tuple(Pinned(f, (layout["tmp"] / "no-such-repo").as_uri(), "0" * 40) for f in ("up-a", "up-b"))
    return find_conformance_dir(env, layout["repo"], MANIFEST, pinned or unreachable)


def test_the_variable_comes_first_then_the_shared_folder_then_the_cache(layout: dict[str, Path]) -> None:
    for place in ("explicit", "shared"):
        populated(layout[place])
    populated(layout["cache_root"] / "conformance")
    assert find(layout, explicit=True) == layout["explicit"]
    assert find(layout) == layout["shared"]
    shutil.rmtree(layout["shared"])
    assert find(layout) == layout["cache_root"] / "conformance"


def test_a_shared_folder_above_the_parent_is_found_too(layout: dict[str, Path]) -> None:
    above = populated(layout["tmp"] / "shared" / "conformance")
    assert find(layout) == above


def test_a_wrong_variable_is_an_error_not_a_reason_to_look_elsewhere(layout: dict[str, Path]) -> None:
    populated(layout["shared"])
    layout["explicit"].mkdir()
    with pytest.raises(ConformanceDataMissing, match=r"\(RAGEN_CONFORMANCE_DIR\) is not the pinned one: up-a/config/base\.yaml is missing"):
        find(layout, explicit=True)


def test_a_changed_file_is_refused_by_its_hash(layout: dict[str, Path]) -> None:
    populated(layout["shared"], {**FILES, "up-b/verl/x.yaml": b"b: 3\n"})
    with pytest.raises(ConformanceDataMissing, match=r"up-b/verl/x\.yaml differs from the pinned commit"):
        find(layout)


def test_without_data_or_network_the_suite_names_the_variable_and_the_commits(layout: dict[str, Path]) -> None:
    with pytest.raises(ConformanceDataMissing) as failed:
        find(layout)
    message = str(failed.value)
    assert "RAGEN_CONFORMANCE_DIR is unset" in message
    assert f"no cache at {layout['cache_root'] / 'conformance'}" in message
    assert "fetching it failed (git fetch" in message
    assert f"at {'0' * 40} (as up-a/)" in message
    assert not (layout["cache_root"] / "conformance").exists()


def test_the_real_message_names_ragen_and_verl_at_their_full_commits(tmp_path: Path) -> None:
    env = {"RAGEN_CACHE": str(tmp_path / "cache")}
    offline = tuple(Pinned(p.folder, (tmp_path / "offline").as_uri(), p.commit) for p in PINNED)
    with pytest.raises(ConformanceDataMissing) as failed:
        find_conformance_dir(env, tmp_path / "repo", read_manifest(), offline)
    message = str(failed.value)
    assert "20daedc47558e000f7de912b060646bf2e8026bd (as ragen-20daedc/)" in message
    assert "d62da4950573d7a4b7ef2362337952e7ab59e78d (as verl-d62da49/)" in message
    assert "ragen-20daedc/config/ and verl-d62da49/verl/trainer/config/" in message


def test_the_pinned_commits_are_fetched_into_the_cache_and_checked(layout: dict[str, Path]) -> None:
    pinned = (upstream(layout["tmp"], "up-a", FILES), upstream(layout["tmp"], "up-b", FILES))
    cache = layout["cache_root"] / "conformance"
    assert find(layout, pinned=pinned) == cache
    assert sorted(str(p.relative_to(cache)) for p in cache.rglob("*") if p.is_file()) == sorted(FILES)
    # The second time the cache answers: the upstream may be gone.
    for p in pinned:
        shutil.rmtree(layout["tmp"] / f"upstream-{p.folder}")
    assert find(layout, pinned=pinned) == cache


def test_a_fetched_file_that_differs_from_the_manifest_never_reaches_the_cache(layout: dict[str, Path]) -> None:
    changed = {**FILES, "up-a/config/base.yaml": b"a: 2\n"}
    pinned = (upstream(layout["tmp"], "up-a", changed), upstream(layout["tmp"], "up-b", FILES))
    with pytest.raises(ConformanceDataMissing, match=r"up-a/config/base\.yaml differs from the pinned commit"):
        find(layout, pinned=pinned)
    assert not (layout["cache_root"] / "conformance").exists()


def test_a_commit_the_upstream_lacks_is_a_fetch_failure(tmp_path: Path) -> None:
    real = upstream(tmp_path, "up-a", FILES)
    (tmp_path / "cache").mkdir()
    with pytest.raises(RuntimeError, match="git fetch"):
        fetch_pinned(tmp_path / "cache" / "conformance", MANIFEST, (Pinned("up-a", real.url, "1" * 40),))
    assert not (tmp_path / "cache" / "conformance").exists()


def test_the_cache_defaults_to_the_users_cache_folder() -> None:
    assert default_cache({"HOME": "/h"}) == Path("/h/.cache/ragen-orchestrator/conformance")
    assert default_cache({"HOME": "/h", "RAGEN_CACHE": "/c"}) == Path("/c/conformance")


def test_the_manifest_lists_both_config_folders() -> None:
    names = read_manifest()
    assert any(n.startswith("ragen-20daedc/config/") for n in names)
    assert any(n.startswith("verl-d62da49/verl/trainer/config/") for n in names)
    assert all(len(d) == 64 for d in names.values())
