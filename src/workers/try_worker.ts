/** Worker: `wats try`. Permissions: "try" in src/cli/permissions.ts. @module */
import { serveCommand } from "../cli/worker_entry.ts";
import { tryCommand } from "../cli/try.ts";

serveCommand(tryCommand);
