/** Worker: `wats ask`. Permissions: "ask" in src/cli/permissions.ts. @module */
import { serveCommand } from "../cli/worker_entry.ts";
import { askCommand } from "../cli/ask.ts";

serveCommand(askCommand);
