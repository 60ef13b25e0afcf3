/**
 * Codex's part of the launch (src/runner/runtimes/launch.ts): a key its settings name must be
 * set where wats starts, said then rather than by every run failing; and the lock's self-check
 * listens on an ephemeral loopback port, connecting nowhere with it (docs/codex.md).
 *
 * @module
 */

import type { RuntimeLaunch } from "../runtime.ts";
import { requireCodexKey } from "./prepare.ts";

/** Codex's launch. */
export const codexLaunch: RuntimeLaunch = {
  launch: (at) => {
    requireCodexKey(at.values, at.env, at.dataDir);
    return { loopbackServer: true };
  },
};
