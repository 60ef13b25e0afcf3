/**
 * Worker: `wats mcp`, the stdio bridge to the daemon's socket. Holds read on the
 * data dir, the socket grants, and run on this program's own executable only
 * (to start a background node that never runs agents).
 *
 * @module
 */
import { serveCommand } from "../cli/worker_entry.ts";
import { mcpCommand } from "../cli/mcp.ts";

serveCommand(mcpCommand);
