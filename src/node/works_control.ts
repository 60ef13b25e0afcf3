/**
 * The daemon's answers to the `work_*` control requests of `wats work` and
 * the dashboard (src/contracts/session.ts): list and show answer JSON text
 * (`WorksPage`, `WorkDetail`), the operations a message line. The work itself
 * is done in src/acp (works.ts, work_ops.ts).
 *
 * @module
 */

import type { ControlRequest } from "../contracts/session.ts";
import type { WorkDetail } from "../contracts/works.ts";
import { MAX_LINE_BYTES } from "../mcp/conn_transport.ts";
import { WatsError } from "../errors.ts";
import type { NodeAcp } from "../acp/setup.ts";
import { listWorks, showWork } from "../acp/works.ts";
import { discardWork, mergeWork, newWork, pushWork, sendWork } from "../acp/work_ops.ts";
import { callsSpend, type SpendItem } from "../runner/spend_figures.ts";

/** True for the control ops this module answers. */
export function isWorkOp(op: ControlRequest["op"]): boolean {
  return op.startsWith("work_");
}

/**
 * Answers one `work_*` control request; throws a `WatsError` with the refusal.
 * `spend` reads the node's spend items (src/runner/spend_figures.ts `readSpend`),
 * the one source of the work's `spentUsd`.
 */
export async function worksControl(
  acp: NodeAcp | undefined,
  req: ControlRequest,
  spend: (now: number) => SpendItem[],
): Promise<string> {
  if (acp === undefined) {
    if (req.op === "work_list") return JSON.stringify({ works: [] });
    throw new WatsError(
      "acp.no_work",
      "no coding agents: config.toml has no enabled [harnesses.NAME], so there are no works",
    );
  }
  const src = acp.works;
  if (req.op === "work_list") {
    // What the page's "New work" form offers: the enabled harnesses and the checkouts allowed.
    const start = {
      harnesses: Object.values(src.harnesses).filter((h) => h.enabled).map((h) => h.name),
      checkouts: src.checkoutNames(),
    };
    return JSON.stringify({ ...(await listWorks(src, req.page ?? 0)), start });
  }
  if (req.op === "work_new") {
    return await newWork(src, {
      harness: req.harness ?? "",
      checkout: req.checkout ?? "",
      work: req.work ?? "",
      task: req.text ?? "",
    });
  }
  const id = req.work;
  if (id === undefined || id === "") {
    throw new WatsError("acp.no_work", `${req.op} needs the work's id: see \`wats work list\``);
  }
  switch (req.op) {
    case "work_show": {
      const d = await showWork(src, id);
      const spentUsd = callsSpend(spend(Date.now()), d.calls.map((c) => c.id));
      return fitLine({ ...d, spentUsd });
    }
    case "work_merge":
      return await mergeWork(src, id, req.head);
    case "work_push":
      return await pushWork(src, id, req.draftPr === true, req.head);
    case "work_send":
      return await sendWork(src, id, { text: req.text ?? "", file: req.file, line: req.line });
    case "work_discard":
      return await discardWork(src, id, req.head);
    default:
      throw new WatsError("mcp.bad_control", `${req.op} is not a work operation`);
  }
}

/**
 * The work as JSON that fits the socket's one answer line (escaped once more
 * inside it): past the caps of src/acp (diff, transcript), what still does not
 * fit goes, the transcript first, then the diff's lines (`diffCut` says so).
 */
export function fitLine(d: WorkDetail, maxBytes = MAX_LINE_BYTES * 0.8): string {
  const size = (x: WorkDetail) =>
    new TextEncoder().encode(JSON.stringify(JSON.stringify(x))).length;
  let out = d;
  while (size(out) > maxBytes && out.transcript.length > 0) {
    out = { ...out, transcript: out.transcript.slice(Math.ceil(out.transcript.length / 2)) };
  }
  if (size(out) > maxBytes) {
    out = { ...out, diffCut: true, diff: out.diff.map((f) => ({ ...f, hunks: [], cut: true })) };
  }
  return JSON.stringify(out);
}
