/**
 * Worker: `wats mcp token create|list|revoke`. Holds read on config.toml and the token file,
 * write on the token file (and the file it is written through) only.
 *
 * @module
 */
import { serveCommand } from "../cli/worker_entry.ts";
import { mcpTokenCommand } from "../cli/mcp_token.ts";

serveCommand(mcpTokenCommand);
