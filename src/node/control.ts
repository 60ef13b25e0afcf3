/**
 * The node's control ops as a table, `{ op → handler }`: what a CLI command (`wats resume`,
 * `wats guardian halt`, `wats work …`, a foreground `wats` taking over) sends on a socket instead
 * of a hello (`ControlRequest`, src/contracts/session.ts). The daemon's `mcp.sock` serves the whole
 * table; a sandboxed run's own socket (run_socket.ts) is never given it: every op speaks for the
 * person (docs/decisions/run_socket.md, "No control op on a run's socket"). A new op is one row
 * here: the table is typed over every op `CONTROL_OPS` lists, so an op without a handler does not
 * compile.
 *
 * @module
 */

import type { Logger } from "@logtape/logtape";
import type { ControlRequest } from "../contracts/session.ts";
import type { EventSink } from "../contracts/node_events.ts";
import type { ControlAnswer } from "../mcp/socket_server.ts";
import { type NodeAcp, sweepNow } from "../acp/setup.ts";
import { WatsError } from "../errors.ts";
import type { SpendItem } from "../runner/spend_figures.ts";
import type { HaltState } from "./halt.ts";
import { worksControl } from "./works_control.ts";

/** A control op's name. */
export type ControlOp = ControlRequest["op"];

/** Answers one control request, or throws a `WatsError` saying why not. */
export type ControlHandler = (req: ControlRequest) => Promise<ControlAnswer>;

/** The ops a socket answers; an op that is not in it is refused. */
export type ControlTable = { readonly [op in ControlOp]?: ControlHandler };

/** What the node's ops act on. */
export interface ControlParts {
  /** The coding agents over ACP, when any harness is enabled (sweep and the works). */
  codingAgents?: NodeAcp;
  halt: HaltState;
  /** Posts a halt as the person; resolves with the line to answer. */
  postHalt: (reason: string) => Promise<string>;
  /** Started in the background by `wats mcp`: only such a node may be taken over. */
  startedByMcp: boolean;
  /** Stops the node; called once the takeover's answer is out. */
  takeOver: () => void;
  events: EventSink;
  log: Logger;
  /** The node's spend items (src/runner/spend_figures.ts `readSpend`): a work's cost. */
  spend: (now: number) => SpendItem[];
}

/** Every op the node answers on `mcp.sock`. */
export function nodeControl(p: ControlParts): Record<ControlOp, ControlHandler> {
  const work: ControlHandler = (req) => worksControl(p.codingAgents, req, p.spend);
  return {
    halt: (req) => p.postHalt(req.reason ?? ""),
    resume: () => {
      const ended = p.halt.resume();
      p.events({ event: "resumed" });
      p.log.info("agent runs resumed by `wats resume`");
      return Promise.resolve(
        ended ? `resumed: the halt ${ended.id.slice(0, 12)} no longer holds` : "nothing was halted",
      );
    },
    takeover: () => {
      if (!p.startedByMcp) {
        throw new WatsError(
          "daemon.foreground",
          `this node (pid ${Deno.pid}) was started in the foreground, not by \`wats mcp\`; ` +
            "it is not taken over: stop it first",
        );
      }
      p.log.info("a foreground wats takes over; stopping");
      return Promise.resolve({
        message: `the node started by \`wats mcp\` (pid ${Deno.pid}) stops`,
        afterAnswer: p.takeOver,
      });
    },
    sweep: () => sweepNow(p.codingAgents),
    work_list: work,
    work_show: work,
    work_merge: work,
    work_push: work,
    work_send: work,
    work_discard: work,
    work_new: work,
  };
}

/**
 * The socket's control handler for `table`, or undefined when the table is empty (the socket
 * then refuses every control line as it refuses a watch).
 */
export function controlHandler(table: ControlTable): ControlHandler | undefined {
  if (Object.keys(table).length === 0) return undefined;
  return async (req) => {
    const handler = Object.hasOwn(table, req.op) ? table[req.op] : undefined;
    if (handler === undefined) {
      throw new WatsError("mcp.bad_control", `this socket does not answer ${req.op}`);
    }
    return await handler(req);
  };
}
