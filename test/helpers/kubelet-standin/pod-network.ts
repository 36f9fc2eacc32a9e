import { execFile } from 'node:child_process';
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { KUBE_ENV } from './environment.js';

const run = promisify(execFile);

/**
 * Part of the stand-in kubelet: what a CNI plugin does for each Pod. One Linux bridge with the
 * node's address; per Pod a network namespace, a veth pair onto the bridge, an address of its own
 * and a default route through the bridge (Ray reads its node IP from the route to the outside).
 * `ip netns exec` bind-mounts /etc/netns/<ns>/hosts and resolv.conf over /etc/hosts and
 * /etc/resolv.conf, which is how Pods get their hosts file (the kubelet writes one too) and, here,
 * the cluster DNS names of Services (no cluster DNS server runs). resolv.conf points at a resolver
 * that refuses at once, so a name that is not in hosts fails fast instead of timing out.
 */
export const BRIDGE = KUBE_ENV.bridge;
const SUBNET_PREFIX = KUBE_ENV.subnetPrefix;
export const NODE_IP = `${SUBNET_PREFIX}.0.1`;
/** Every network namespace of the stand-in starts with this (stale ones are removed at start). */
export const NETNS_PREFIX = KUBE_ENV.netnsPrefix;

async function ip(...args: string[]): Promise<void> {
  await run('ip', args);
}

export interface PodNetwork {
  netns: string;
  podIP: string;
  /** The bridge's end of the Pod's veth pair (the Pod's end is eth0 in netns). */
  hostVeth: string;
}

export class PodNetworks {
  private next = 10;
  private readonly used = new Set<string>();

  /** The bridge with the node address; namespaces and /etc/netns dirs a crashed run left are removed. */
  async setUp(): Promise<void> {
    await this.removeStale();
    await ip('link', 'add', BRIDGE, 'type', 'bridge').catch(() => undefined);
    await ip('addr', 'replace', `${NODE_IP}/16`, 'dev', BRIDGE);
    await ip('link', 'set', BRIDGE, 'up');
  }

  private async removeStale(): Promise<void> {
    const { stdout } = await run('ip', ['netns', 'list']);
    for (const line of stdout.split('\n')) {
      const name = line.split(' ')[0] ?? '';
      if (name.startsWith(NETNS_PREFIX)) await this.remove(name);
    }
    for (const dir of await readdir('/etc/netns').catch(() => [] as string[])) {
      if (dir.startsWith(NETNS_PREFIX)) await rm(join('/etc/netns', dir), { recursive: true, force: true });
    }
  }

  private allocate(): string {
    for (let i = 0; i < 65_000; i++) {
      const n = this.next;
      this.next = this.next >= 65_000 ? 10 : this.next + 1;
      const address = `${SUBNET_PREFIX}.${Math.floor(n / 256)}.${n % 256}`;
      if (n % 256 !== 0 && n % 256 !== 255 && !this.used.has(address)) {
        this.used.add(address);
        return address;
      }
    }
    throw new Error('stand-in CNI: no free Pod address');
  }

  /** A namespace for one Pod (named after its uid), with an address and a fast-failing resolver. */
  async create(uid: string): Promise<PodNetwork> {
    const id = uid.replace(/-/g, '').slice(0, 10);
    const netns = `${NETNS_PREFIX}${id}`;
    const podIP = this.allocate();
    const host = `rkv${id}`;
    const peer = `rkp${id}`;
    await ip('netns', 'add', netns);
    await ip('link', 'add', host, 'type', 'veth', 'peer', 'name', peer);
    await ip('link', 'set', peer, 'netns', netns);
    await ip('link', 'set', host, 'master', BRIDGE, 'up');
    await ip('-n', netns, 'link', 'set', peer, 'name', 'eth0');
    await ip('-n', netns, 'addr', 'add', `${podIP}/16`, 'dev', 'eth0');
    await ip('-n', netns, 'link', 'set', 'eth0', 'up');
    await ip('-n', netns, 'link', 'set', 'lo', 'up');
    await ip('-n', netns, 'route', 'add', 'default', 'via', NODE_IP);
    await mkdir(join('/etc/netns', netns), { recursive: true });
    await writeFile(
      join('/etc/netns', netns, 'resolv.conf'),
      'nameserver 127.0.0.1\noptions timeout:1 attempts:1\n',
    );
    await this.writeHosts(netns, '127.0.0.1\tlocalhost\n');
    return { netns, podIP, hostVeth: host };
  }

  /**
   * A degraded NIC, for real: a token bucket (tc tbf) at `rate` on both ends of the Pod's veth, so
   * what the Pod sends and what it receives both go at that rate (netem is not in this kernel).
   */
  async limitRate(net: PodNetwork, rate: string): Promise<void> {
    const tbf = ['qdisc', 'add', 'dev'];
    const shape = ['root', 'tbf', 'rate', rate, 'burst', '64kb', 'latency', '200ms'];
    await run('tc', [...tbf, net.hostVeth, ...shape]);
    await run('ip', ['netns', 'exec', net.netns, 'tc', ...tbf, 'eth0', ...shape]);
  }

  /** The link cut: the bridge's end of the veth down (the Pod's end stays up, as a dead switch port). */
  async cutLink(net: PodNetwork): Promise<void> {
    await ip('link', 'set', net.hostVeth, 'down');
  }

  /** Rewritten in place (same inode): a running container's bind-mounted /etc/hosts sees it. */
  async writeHosts(netns: string, content: string): Promise<void> {
    await writeFile(join('/etc/netns', netns, 'hosts'), content);
  }

  /** Deleting the namespace deletes its end of the veth pair, and with it the bridge's end. */
  async remove(netns: string, podIP?: string): Promise<void> {
    await ip('netns', 'delete', netns).catch(() => undefined);
    await rm(join('/etc/netns', netns), { recursive: true, force: true });
    if (podIP) this.used.delete(podIP);
  }

  async tearDown(): Promise<void> {
    await this.removeStale();
    await ip('link', 'delete', BRIDGE).catch(() => undefined);
  }
}

/** The hosts file of one Pod: localhost, its own name, and the Services' DNS names. */
export function hostsFile(
  own: { podIP: string; hostname: string },
  services: { names: string[]; ips: string[] }[],
): string {
  const lines = [
    '# Kubernetes-managed hosts file (stand-in kubelet).',
    '127.0.0.1\tlocalhost',
    '::1\tlocalhost ip6-localhost ip6-loopback',
    `${own.podIP}\t${own.hostname}`,
  ];
  for (const s of services) for (const address of s.ips) lines.push(`${address}\t${s.names.join(' ')}`);
  return `${lines.join('\n')}\n`;
}
