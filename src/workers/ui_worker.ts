/** Worker: `wats ui`. Permissions: "ui" in src/cli/permissions.ts. @module */
import { serveCommand } from "../cli/worker_entry.ts";
import { uiCommand } from "../cli/ui.ts";

serveCommand(uiCommand);
