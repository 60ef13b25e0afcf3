/** Worker: `wats config get|list|set|unset|ack`, with the subcommand's permissions. @module */
import { serveCommand } from "../cli/worker_entry.ts";
import { configCommand } from "../cli/config.ts";

serveCommand(configCommand);
