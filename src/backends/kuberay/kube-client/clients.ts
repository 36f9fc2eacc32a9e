import type { KubeConfig } from '@kubernetes/client-node';
import type { RetryOptions } from '../../../errors/retry-transient.js';
import type { BackendLogger } from '../../logger.js';
import { AccessReviewsClient } from './access-reviews.js';
import { ConfigMapsClient } from './configmaps.js';
import { NodesClient } from './nodes.js';
import { PodsClient } from './pods.js';
import { RayClustersClient } from './rayclusters.js';
import { SecretsClient } from './secrets.js';
import { KubeTransport } from './transport.js';
import { WorkloadsClient } from './workloads.js';

/**
 * The kuberay backend's Kubernetes client: one client per resource, all over one transport, so
 * `transport.requests` is every request the backend sent.
 */
export class KubeClients {
  readonly transport: KubeTransport;
  readonly rayClusters: RayClustersClient;
  readonly pods: PodsClient;
  readonly secrets: SecretsClient;
  readonly configMaps: ConfigMapsClient;
  readonly workloads: WorkloadsClient;
  readonly nodes: NodesClient;
  readonly accessReviews: AccessReviewsClient;

  /** `retry`: see KubeTransport (the default retries nothing in place); `logger`: a 409 read back. */
  constructor(kc: KubeConfig, namespace: string, logger?: BackendLogger, retry?: Partial<RetryOptions>) {
    this.transport = new KubeTransport(kc, namespace, retry);
    this.rayClusters = new RayClustersClient(this.transport, logger);
    this.pods = new PodsClient(this.transport);
    this.secrets = new SecretsClient(this.transport);
    this.configMaps = new ConfigMapsClient(this.transport);
    this.workloads = new WorkloadsClient(this.transport);
    this.nodes = new NodesClient(this.transport);
    this.accessReviews = new AccessReviewsClient(this.transport);
  }
}
