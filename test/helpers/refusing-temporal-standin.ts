import { Server, ServerCredentials, status } from '@grpc/grpc-js';

/**
 * A stand-in for a Temporal frontend that enforces auth (API key or mTLS) and refuses the caller:
 * the dev server cannot enforce any (it has no authorizer), so this answers StartWorkflowExecution
 * with PERMISSION_DENIED, as Temporal Cloud or a server with an authorizer does. Every other method
 * is UNIMPLEMENTED, which the real client tolerates for GetSystemInfo at connect. The client under
 * test is the real one: it builds the error exactly as it does against a real server.
 */
export async function refusingTemporalStandin(
  detail = 'Request unauthorized.',
): Promise<{ address: string; close: () => Promise<void> }> {
  const server = new Server();
  const raw = (b: Buffer) => b;
  server.addService(
    {
      StartWorkflowExecution: {
        path: '/temporal.api.workflowservice.v1.WorkflowService/StartWorkflowExecution',
        requestStream: false,
        responseStream: false,
        requestSerialize: raw,
        requestDeserialize: raw,
        responseSerialize: raw,
        responseDeserialize: raw,
      },
    },
    {
      StartWorkflowExecution: (_call: unknown, callback: (err: { code: number; details: string }) => void) =>
        callback({ code: status.PERMISSION_DENIED, details: detail }),
    },
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  return {
    address: `127.0.0.1:${port}`,
    close: () => new Promise<void>((r) => server.tryShutdown(() => r())),
  };
}
