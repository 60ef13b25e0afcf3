/**
 * Worker: `wats sandbox-relay`, the model-only sandbox's relay. Permissions: "sandbox-relay"
 * (loopback listens, the one model socket, run on the agent's program). @module
 */
import { serveCommand } from "../cli/worker_entry.ts";
import { sandboxRelayCommand } from "../cli/sandbox_relay.ts";

serveCommand(sandboxRelayCommand);
