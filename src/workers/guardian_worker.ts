/**
 * Worker: `wats resume`, `wats agent sweep` and `wats guardian …`. Permissions: "control",
 * "config-read" or "config-write". @module
 */
import { serveCommand } from "../cli/worker_entry.ts";
import { guardianCommand, resumeCommand, sweepCommand } from "../cli/guardian.ts";

serveCommand((ctx) =>
  ctx.words[0] === "resume"
    ? resumeCommand(ctx)
    : ctx.words[0] === "agent"
    ? sweepCommand(ctx)
    : guardianCommand(ctx)
);
