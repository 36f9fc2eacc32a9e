import { type Client, WorkflowNotFoundError } from '@temporalio/client';

/** The latest run's status of a workflow, for the reaper; undefined when it does not exist. */
export function describeWorkflowStatus(client: Client) {
  return async (workflowId: string): Promise<{ status: string; closeTime?: string } | undefined> => {
    try {
      const d = await client.workflow.getHandle(workflowId).describe();
      return { status: d.status.name, closeTime: d.closeTime?.toISOString() };
    } catch (err) {
      if (err instanceof WorkflowNotFoundError) return undefined;
      throw err;
    }
  };
}
