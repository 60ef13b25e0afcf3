/** Worker: `wats status`. Permissions: "status" in src/cli/permissions.ts. @module */
import { serveCommand } from "../cli/worker_entry.ts";
import { statusCommand } from "../cli/status.ts";

serveCommand(statusCommand);
