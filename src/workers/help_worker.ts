/** Worker: help and version; holds no permission at all. @module */
import { serveCommand } from "../cli/worker_entry.ts";
import { helpCommand } from "../cli/help.ts";

serveCommand(helpCommand);
