/** Worker: `wats setup …`. Permissions: "setup" in src/cli/permissions.ts. @module */
import { serveCommand } from "../cli/worker_entry.ts";
import { setupCommand } from "../cli/setup.ts";

serveCommand(setupCommand);
