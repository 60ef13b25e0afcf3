/** Worker: `wats agent …`. Permissions: "agent-read", "agent-decide" or "agent-edit". @module */
import { serveCommand } from "../cli/worker_entry.ts";
import { agentCommand } from "../cli/agent.ts";

serveCommand(agentCommand);
