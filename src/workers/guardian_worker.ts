/** Worker: `wats resume` and `wats guardian …`. Permissions: "control", "config-read" or "config-write". @module */
import { serveCommand } from "../cli/worker_entry.ts";
import { guardianCommand, resumeCommand } from "../cli/guardian.ts";

serveCommand((ctx) => ctx.words[0] === "resume" ? resumeCommand(ctx) : guardianCommand(ctx));
