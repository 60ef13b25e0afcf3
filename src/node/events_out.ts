/**
 * The event contract moved to src/events.ts so src/net can share it without
 * importing src/node. Kept only because src/node/agent_runner.ts (rewritten by
 * the runner split, issue 8 item 16) still imports it from here: point that
 * import at ../events.ts and delete this file.
 *
 * @module
 */

export type { EventSink, NodeEvent } from "../events.ts";
