/** Worker: `wats thread`. Permissions: "thread" in src/cli/permissions.ts. @module */
import { serveCommand } from "../cli/worker_entry.ts";
import { threadCommand } from "../cli/thread.ts";

serveCommand(threadCommand);
