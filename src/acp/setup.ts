/**
 * Builds the node's ACP layer from the loaded settings, at daemon start: the
 * one call the daemon makes into src/acp. No harness enabled: no layer, and no
 * harness tools.
 *
 * @module
 */

import type { AcpTables } from "../config/acp_tables.ts";
import type { DataPaths } from "../config/paths.ts";
import type { Settings } from "../config/schema.ts";
import { ConfigError } from "../errors.ts";
import { AcpLayer, type CallEvent } from "./calls.ts";
import { makePolicy } from "./policy.ts";

/** What the daemon gives the layer. */
export interface AcpSetup {
  acp: AcpTables;
  settings: Settings;
  paths: DataPaths;
  /** The daemon's environment: harnesses start from it. */
  env: Record<string, string>;
  /** Names harness tools may not take (the wats tools'). */
  reserved: readonly string[];
  onEvent?: (e: CallEvent) => void;
  onCost?: (usd: number) => void;
}

/**
 * The ACP layer, or undefined when no harness is enabled. Throws
 * `ConfigError` for a harness named like a wats tool or an `agent.checkouts`
 * entry that names no checkout.
 */
export function acpLayerFor(s: AcpSetup): AcpLayer | undefined {
  const enabled = Object.values(s.acp.harnesses).filter((h) => h.enabled);
  for (const h of enabled) {
    if (s.reserved.includes(h.name)) {
      throw new ConfigError(
        "config.bad_value",
        `[harnesses.${h.name}] is named like the wats tool ${h.name}; rename the table`,
      );
    }
  }
  for (const c of s.settings["agent.checkouts"]) {
    if (!Object.hasOwn(s.acp.checkouts, c)) {
      throw new ConfigError(
        "config.bad_value",
        `agent.checkouts names "${c}", but config.toml has no [checkouts.${c}]; ` +
          `add it or remove the name (checkouts: ${
            Object.keys(s.acp.checkouts).join(", ") || "none"
          })`,
      );
    }
  }
  if (enabled.length === 0) return undefined;
  return new AcpLayer({
    worktrees: s.paths.worktrees,
    harnesses: s.acp.harnesses,
    checkouts: s.acp.checkouts,
    allowedCheckouts: s.settings["agent.checkouts"],
    policy: makePolicy(s.settings["policy.allow"], s.settings["policy.deny"], s.paths.dataDir),
    env: s.env,
    onEvent: s.onEvent,
    onCost: s.onCost,
  });
}
