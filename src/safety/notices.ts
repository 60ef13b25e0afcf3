/**
 * The safety notices: what differs between config.toml (and WATS_* variables)
 * and the values acknowledged in safety.json. Computed from the files at each
 * call, so `wats status` and the MCP status tool see a change the moment it is
 * made, while the running node keeps the values it started with.
 *
 * @module
 */

import { errorMessage } from "../error_message.ts";
import type { DataPaths } from "../config/paths.ts";
import { loadSettings } from "../config/settings.ts";
import { diffSafety, formatSafetyNotice, readAcknowledged, safetyValues } from "./safety_file.ts";

/**
 * Lines that say which safety settings changed without `wats config ack`; empty
 * when all is acknowledged. Never throws: an unreadable file is itself a notice.
 *
 * Requires `--allow-read` on config.toml and safety.json.
 */
export async function safetyNotices(
  paths: DataPaths,
  env: Record<string, string>,
  user: string,
): Promise<string[]> {
  try {
    const acked = await readAcknowledged(paths.safety);
    if (acked === null) {
      return ["safety.json is missing: run `wats config ack` to record the safety settings"];
    }
    const now = await loadSettings(paths, env, {}, user);
    return formatSafetyNotice(diffSafety(acked.values, safetyValues(now.values, now.acp)));
  } catch (err) {
    return [errorMessage(err)];
  }
}
