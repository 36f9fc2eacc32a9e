#!/bin/bash
# Part of the stand-in kubelet (index.ts). Runs as `ip netns exec <pod netns> unshare --uts --
# enter-pod.sh ...`, so it is already in the Pod's network namespace and in a mount namespace of
# its own. It gives the container what a container runtime would: the Pod's hostname, a private
# /tmp and the Pod's volume mounts (bind mounts that only this container sees), the working
# directory, then the container's command as the container's user (uid, gid, supplementary groups
# comma-separated or empty), with no capabilities left, as a runtime starts a non-root container.
#   enter-pod.sh HOSTNAME WORKDIR PODTMP STAGE UID GID GROUPS [SRC DST ro|rw]... -- COMMAND...
set -euo pipefail
hostname "$1"
workdir=$2 podtmp=$3 stage=$4 uid=$5 gid=$6 groups=$7
shift 7
srcs=() dsts=() modes=()
while [[ $1 != -- ]]; do
  srcs+=("$1") dsts+=("$2") modes+=("$3")
  shift 3
done
shift
# Every source is bound before /tmp is covered: a source may lie under the host's /tmp.
for i in "${!srcs[@]}"; do
  mkdir -p "$stage/$i"
  mount --bind "${srcs[$i]}" "$stage/$i"
done
mount --bind "$podtmp" /tmp
# A non-root container must reach its mounts. An ancestor folder only root may enter (the host's
# /root, where the venv's Python is installed) is covered by an empty 0755 tmpfs in this container,
# as an image holds its Python where its user reads it.
open_path() {
  local d='' part
  IFS=/ read -ra parts <<<"${1#/}"
  for part in "${parts[@]}"; do
    d=$d/$part
    [[ -d $d ]] || return 0
    if (((0$(stat -c %a "$d") & 1) == 0)); then mount -t tmpfs -o mode=0755 tmpfs "$d"; fi
  done
}
for i in "${!dsts[@]}"; do
  if [[ $uid != 0 ]]; then open_path "$(dirname "${dsts[$i]}")"; fi
  mkdir -p "${dsts[$i]}"
  mount --bind "$stage/$i" "${dsts[$i]}"
  if [[ ${modes[$i]} == ro ]]; then mount -o remount,bind,ro "${dsts[$i]}"; fi
done
# Like a container runtime, create a missing working directory.
mkdir -p "$workdir"
cd "$workdir"
# A container runtime's open-files limit (containerd: 1048576), so the image's `ulimit -n 65536`
# (KubeRay's ray start command) works for a non-root user too.
ulimit -n 1048576 2>/dev/null || true
if [[ $uid == 0 ]]; then exec "$@"; fi
if [[ -n $groups ]]; then grouparg=(--groups "$groups"); else grouparg=(--clear-groups); fi
exec setpriv --reuid "$uid" --regid "$gid" "${grouparg[@]}" --inh-caps=-all -- "$@"
