/** The Temporal ids a run records in its manifest. */
export interface RunIds {
  workflowId: string;
  runId: string;
  namespace: string;
  taskQueue: string;
}

/** Just the ids (workflowInfo() has many more fields; a manifest schema is strict). */
export function runIds(info: RunIds): RunIds {
  return {
    workflowId: info.workflowId,
    runId: info.runId,
    namespace: info.namespace,
    taskQueue: info.taskQueue,
  };
}
