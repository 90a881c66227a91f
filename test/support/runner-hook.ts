/**
 * Loaded with `--import` by `npm test` before the test runner: Node 20's runner (its harness)
 * enables an async hook with a `destroy` callback in every test process, to forget each async
 * resource it mapped to a test. A destroy callback makes V8 track every Promise's collection
 * (`registerDestroyHook`), and the tests here run whole clusters in process (the sandbox API
 * server, the controller, simulators): in a conformance run that was 4.7 s of 36 s of CPU, the
 * largest single entry of its profile. The hook is kept, without its destroy callback: the
 * runner still maps every resource to its test (nesting, failures attributed to the test that
 * caused them); what it no longer does is forget the mapping of a resource that is gone. Async
 * ids are never reused, so a stale entry is never looked up again; it costs memory only (about
 * 3 MB over a two-minute conformance run). Measured side by side: bench/README.md, "Session 19".
 */
import asyncHooks, { type HookCallbacks } from 'node:async_hooks';

const create = asyncHooks.createHook;

/** Whether the hook being created is the test runner harness's (by the caller's frame). */
export function fromRunnerHarness(stack: string | undefined): boolean {
  return /\(node:internal\/test_runner\/harness:/.test(stack ?? '');
}

/** How many hooks this process's runner created here, each without its destroy callback. */
export const stripped = { count: 0 };

/** The harness's callbacks without `destroy`; any other hook's unchanged. */
export function withoutDestroy(callbacks: HookCallbacks): HookCallbacks {
  const { destroy: _destroy, ...rest } = callbacks;
  return rest;
}

asyncHooks.createHook = function createHook(callbacks: HookCallbacks) {
  if (!fromRunnerHarness(new Error().stack)) return create(callbacks);
  stripped.count++;
  return create(withoutDestroy(callbacks));
};
