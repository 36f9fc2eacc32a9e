/**
 * The machine-wide names of one stand-in kube environment, so that two run on one machine at once
 * (scripts/test.sh's KubeRay lanes): RAGEN_KUBE_ENV (a digit, default 0) picks the bridge, the Pod
 * subnet and node address, the Service IP range, the network namespaces' prefix, the cgroup root
 * and the Pods' folder. Environment 0 has the names the stand-in always had; each one removes only
 * what its own crashed runs left.
 */
const raw = process.env['RAGEN_KUBE_ENV'] ?? '0';
if (!/^[0-9]$/.test(raw)) throw new Error(`RAGEN_KUBE_ENV=${raw}: one digit, 0 to 9`);
const n = Number(raw);
const suffix = n === 0 ? '' : String(n);

export const KUBE_ENV = {
  bridge: `rgnk${n}`,
  /** The Pods' /16 (the node's address is its .0.1). */
  subnetPrefix: `10.${87 + n}`,
  /** The Service ClusterIP /24 (the `kubernetes` Service gets its .1). */
  serviceSubnetPrefix: `10.0.${n}`,
  netnsPrefix: `rk${suffix}-`,
  cgroupRoot: `/sys/fs/cgroup/unified/ragen-kubelet-standin${n === 0 ? '' : `-${n}`}`,
  /** Per-Pod directories; not under /tmp (each container gets a private /tmp). */
  podsRoot: `/var/tmp/rk${suffix}`,
};
