/**
 * The node's events, handed to every watcher (`wats ui` over mcp.sock, a
 * `{"wats":"watch"}` first line) as well as to the command's own sink. A
 * watcher is a callback that must not block; one that throws is dropped, so a
 * broken reader never stops the node. Coding agents' session updates
 * (`acp_update`, one per streamed chunk) stay out: watchers want what changed,
 * and the run page reads the transcript itself.
 *
 * @module
 */

import type { EventSink, NodeEvent } from "../contracts/node_events.ts";

/** Fans the node's events out to watchers. */
export class EventHub {
  readonly #watchers = new Set<(e: NodeEvent) => void>();

  /** The sink to give the node's parts: `inner` first, then every watcher. */
  sink(inner: EventSink): EventSink {
    return (e) => {
      inner(e);
      if (e.event === "acp_update") return;
      for (const w of [...this.#watchers]) {
        try {
          w(e);
        } catch {
          this.#watchers.delete(w);
        }
      }
    };
  }

  /** Adds a watcher; the function returned removes it. */
  watch(fn: (e: NodeEvent) => void): () => void {
    this.#watchers.add(fn);
    return () => this.#watchers.delete(fn);
  }

  /** How many watchers are attached (for status and tests). */
  get size(): number {
    return this.#watchers.size;
  }
}
