/**
 * Resolves the location it is sent with `resolveLocation` and posts the result:
 * tests/acp/policy_test.ts runs it in a Worker whose read grant is one folder,
 * in a terminal, to show resolving a path outside the grant asks no one.
 */

import { resolveLocation } from "../../src/acp/policy.ts";

const scope = self as unknown as {
  onmessage: (e: MessageEvent<{ path: string; cwd: string }>) => void;
  postMessage(m: string): void;
};
scope.onmessage = (e) => {
  scope.postMessage(resolveLocation(e.data.path, e.data.cwd));
};
