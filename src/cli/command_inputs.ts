/**
 * What a command's permission set depends on beyond the data directory: for the
 * daemon, the configured workdir, listen address, relays and harness programs.
 * The launcher computes these before it starts the Worker.
 *
 * @module
 */

import type { CommandId, PermissionInputs } from "../safety/permissions.ts";
import type { CommandInit } from "./context.ts";

/** Resolves the permission inputs of `id`. */
export function commandInputs(_id: CommandId, init: CommandInit): Promise<PermissionInputs> {
  return Promise.resolve({ paths: init.paths, self: init.self, srcDir: "" });
}
