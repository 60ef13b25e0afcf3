/** Worker: records safety.json at the daemon's first start; may write that file only. @module */
import { serveCommand } from "../cli/worker_entry.ts";
import { safetyInitCommand } from "../cli/safety_init.ts";

serveCommand(safetyInitCommand);
