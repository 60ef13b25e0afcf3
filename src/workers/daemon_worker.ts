/** Worker: the daemon (`wats`, `wats node`). Permissions: "daemon" in src/cli/permissions.ts. @module */
import { serveCommand } from "../cli/worker_entry.ts";
import { daemonCommand } from "../cli/daemon.ts";

serveCommand(daemonCommand);
