import { parseExperimentSpec } from '../../src/cli/spec-files/load.js';
import type { ExperimentSpec } from '../../src/domain/spec/experiment.js';
import { validSpecYaml } from './specs.js';

export const TEST_IMAGE = `registry.example/ragen@sha256:${'a'.repeat(64)}`;

/** The shared test spec on the kuberay backend: storage under the PVC's mount path. */
export function kuberaySpecYaml(storageRoot = '/tmp/ragen-test', pvc = 'ragen-storage'): string {
  return `${validSpecYaml(storageRoot).replace('backend: local', 'backend: kuberay')}image: ${TEST_IMAGE}
kuberay:
  storage:
    pvc: ${pvc}
    mountPath: ${storageRoot}
`;
}

/** The stand-in kubelet's pods run this project's venv, which has the toy payload, not RAGEN's train.py. */
export function kuberaySpec(storageRoot?: string, pvc?: string): ExperimentSpec {
  const spec = parseExperimentSpec(kuberaySpecYaml(storageRoot, pvc));
  return { ...spec, trainer: { ...spec.trainer, entrypoint: ['python', '-m', 'ragen_toy.train'] } };
}
