#!/bin/bash
# Part of the stand-in kubelet (index.ts). Runs as `ip netns exec <pod netns> unshare --uts --
# enter-pod.sh ...`, so it is already in the Pod's network namespace and in a mount namespace of
# its own. It gives the container what a container runtime would: the Pod's hostname, a private
# /tmp and the Pod's volume mounts (bind mounts that only this container sees), the working
# directory, then the container's command.
#   enter-pod.sh HOSTNAME WORKDIR PODTMP STAGE [SRC DST ro|rw]... -- COMMAND...
set -euo pipefail
hostname "$1"
workdir=$2 podtmp=$3 stage=$4
shift 4
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
for i in "${!dsts[@]}"; do
  mkdir -p "${dsts[$i]}"
  mount --bind "$stage/$i" "${dsts[$i]}"
  if [[ ${modes[$i]} == ro ]]; then mount -o remount,bind,ro "${dsts[$i]}"; fi
done
# Like a container runtime, create a missing working directory.
mkdir -p "$workdir"
cd "$workdir"
exec "$@"
