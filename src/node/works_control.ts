/**
 * The daemon's answers to the `work_*` control requests of `wats work` and
 * the dashboard (src/contracts/session.ts): list and show answer JSON text
 * (`WorksPage`, `WorkDetail`), the operations a message line. The work itself
 * is done in src/acp (works.ts, work_ops.ts).
 *
 * @module
 */

import type { ControlRequest } from "../contracts/session.ts";
import { WatsError } from "../errors.ts";
import type { NodeAcp } from "../acp/setup.ts";
import { listWorks, showWork } from "../acp/works.ts";
import { discardWork, mergeWork, pushWork, sendWork } from "../acp/work_ops.ts";

/** True for the control ops this module answers. */
export function isWorkOp(op: ControlRequest["op"]): boolean {
  return op.startsWith("work_");
}

/** Answers one `work_*` control request; throws a `WatsError` with the refusal. */
export async function worksControl(acp: NodeAcp | undefined, req: ControlRequest): Promise<string> {
  if (acp === undefined) {
    if (req.op === "work_list") return JSON.stringify({ works: [] });
    throw new WatsError(
      "acp.no_work",
      "no coding agents: config.toml has no enabled [harnesses.NAME], so there are no works",
    );
  }
  const src = acp.works;
  if (req.op === "work_list") return JSON.stringify(await listWorks(src, req.page ?? 0));
  const id = req.work;
  if (id === undefined || id === "") {
    throw new WatsError("acp.no_work", `${req.op} needs the work's id: see \`wats work list\``);
  }
  switch (req.op) {
    case "work_show":
      return JSON.stringify(await showWork(src, id));
    case "work_merge":
      return await mergeWork(src, id);
    case "work_push":
      return await pushWork(src, id, req.draftPr === true);
    case "work_send":
      return await sendWork(src, id, { text: req.text ?? "", file: req.file, line: req.line });
    case "work_discard":
      return await discardWork(src, id);
    default:
      throw new WatsError("mcp.bad_control", `${req.op} is not a work operation`);
  }
}
