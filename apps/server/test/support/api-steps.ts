// Steps most end-to-end tests take through the API: create a resource (201 expected), wait for an execution to end.
import { expect } from 'vitest';
import type { Caller, FullServer } from './full-server.js';

/** Polls `GET /api/executions/:id` (with logs) until the execution leaves Pending/Running; answers its data. */
export async function settledExecution(server: FullServer, caller: Caller, executionId: string, timeoutMs = 90_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answer = await server.call('GET', `/api/executions/${executionId}?includeLogs=true`, caller);
    if (!['Pending', 'Running'].includes(answer.body.data.status)) return answer.body.data;
    if (Date.now() > deadline) throw new Error(`execution ${executionId} still ${answer.body.data.status}`);
    await new Promise((resolve) => setTimeout(resolve, 150));
  }
}

/** `create(path, body)`: POSTs as `caller`, expects 201 (the answer is in the failure message) and answers the body. */
export function creator(server: FullServer, caller: () => Caller): (path: string, body: unknown) => Promise<any> {
  return async (path, body) => {
    const answer = await server.call('POST', path, caller(), body);
    expect(answer.status, `${path}: ${JSON.stringify(answer.body)}`).toBe(201);
    return answer.body;
  };
}
