import { WorkflowFailedError } from '@temporalio/client';

/**
 * Wait for a workflow's result and print it; exit code 0 on success. A failed workflow prints its
 * reason and, where the failure carries one (ApplicationFailure details), the partial result.
 */
export async function printOutcome<R>(
  kind: string,
  workflowId: string,
  result: Promise<R>,
  print: (r: R) => void,
): Promise<number> {
  try {
    print(await result);
    return 0;
  } catch (err) {
    const failed = err instanceof WorkflowFailedError;
    const details = failed ? (err.cause as { details?: unknown[] } | undefined)?.details?.[0] : undefined;
    console.error(
      `${kind} ${workflowId} did not succeed: ${failed ? (err.cause?.message ?? err.message) : String(err)}`,
    );
    if (details) print(details as R);
    return 1;
  }
}
