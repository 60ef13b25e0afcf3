/**
 * The node's event stream: one record for each thing that happens (a post
 * stored or rejected, a run started or ended, a halt). The node, the network
 * and the runner emit them into an {@linkcode EventSink}; the command decides
 * where they go (`wats node` prints them as JSON lines, the bare daemon drops
 * them). This contract lives below src/node and src/net so both can share it.
 *
 * @module
 */

/** One event. */
export type NodeEvent =
  | {
    event: "started";
    node: string;
    dataDir: string;
    socket: string;
    profiles: Record<string, string>;
    pid: number;
  }
  | { event: "post_stored"; id: string; seq: number; kind: string; author: string; source: string }
  | { event: "post_rejected"; id?: string; code: string; reason: string; source: string }
  | { event: "stopped"; reason: string }
  | { event: string; [field: string]: unknown };

/** Where node events go. */
export type EventSink = (e: NodeEvent) => void;

/** A sink that drops everything: the bare daemon. */
export const noEvents: EventSink = () => {};
