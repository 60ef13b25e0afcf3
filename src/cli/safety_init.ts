/**
 * The daemon's very first start records the acknowledged safety values
 * (docs/decisions/runner.md: "the first run records them silently"). The launcher runs this in
 * a Worker whose only write grant is safety.json, before the daemon's own
 * Worker, which may not write that file at all.
 *
 * @module
 */

import { loadSettings } from "../config/settings.ts";
import { acknowledge, safetyValues } from "../safety/safety_file.ts";
import type { Command } from "./context.ts";

/**
 * Creates safety.json from the current values (config.toml, `WATS_*`
 * variables, defaults; never flags, which last one run). Create-new: when the
 * file exists already, it does nothing. Prints nothing.
 */
export const safetyInitCommand: Command = async (ctx) => {
  const settings = await loadSettings(ctx.paths, ctx.env, {}, ctx.user);
  try {
    await acknowledge(ctx.paths.safety, safetyValues(settings.values, settings.acp), {
      createNew: true,
    });
  } catch (err) {
    if (!(err instanceof Deno.errors.AlreadyExists)) throw err;
  }
  return 0;
};
