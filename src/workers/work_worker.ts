/** Worker: `wats work …`. Permissions: "work". @module */
import { serveCommand } from "../cli/worker_entry.ts";
import { workCommand } from "../cli/work.ts";

serveCommand(workCommand);
