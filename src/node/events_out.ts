/**
 * `wats node` prints one JSON line on stdout for each thing that happens, for
 * scripts: started, post_stored, post_rejected, stopped (and, later, runner
 * events). The bare daemon prints none.
 *
 * @module
 */

import { writeAllSync } from "../cli/io.ts";

/** One line of `wats node`'s output. */
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

/** A sink that writes JSON lines to stdout with a timestamp. */
export function jsonLinesSink(now: () => number = Date.now): EventSink {
  const enc = new TextEncoder();
  return (e) => {
    writeAllSync(
      Deno.stdout,
      enc.encode(JSON.stringify({ ts: new Date(now()).toISOString(), ...e }) + "\n"),
    );
  };
}

/** A sink that drops everything: the bare daemon. */
export const noEvents: EventSink = () => {};
