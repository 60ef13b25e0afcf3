/**
 * What coding agents' calls cost, kept in `<data>/agent/acp_spend.jsonl` (one
 * line a call that reported a cost, or that prompted its agent and reported
 * none: it counts as a run without a cost) so that the budget still counts it
 * after a restart (issue 10, item 8; issue 30). Only the current UTC month
 * matters: older lines are dropped when the file is next written.
 *
 * @module
 */

import { utcMonthStart } from "../duration.ts";

/** One call's cost. */
export interface AcpSpend {
  /** When the call ended, ms since the epoch. */
  at: number;
  /** Absent: the call reported no cost. */
  usd?: number;
  harness: string;
  call: string;
}

/** The spend file of one data directory. */
export class AcpSpendFile {
  readonly path: string;
  constructor(agentDir: string) {
    this.path = `${agentDir}/acp_spend.jsonl`;
  }

  /** The lines of the UTC month of `now` (a missing or damaged line is skipped). */
  month(now: number): AcpSpend[] {
    let text: string;
    try {
      text = Deno.readTextFileSync(this.path);
    } catch {
      return [];
    }
    const start = utcMonthStart(now);
    const out: AcpSpend[] = [];
    for (const line of text.split("\n")) {
      try {
        const v = JSON.parse(line);
        const usd = v?.usd === undefined || typeof v.usd === "number";
        if (typeof v?.at === "number" && usd && v.at >= start) out.push(v);
      } catch {
        // Blank or cut short by a crash.
      }
    }
    return out;
  }

  /** Adds a call's cost; rewrites the file without last month's lines when it holds any. */
  add(spend: AcpSpend): void {
    const kept = this.month(spend.at);
    const line = JSON.stringify(spend) + "\n";
    let stale = false;
    try {
      const first = Deno.readTextFileSync(this.path).split("\n", 1)[0];
      stale = first !== "" && !kept.some((k) => JSON.stringify(k) === first);
    } catch {
      // No file yet.
    }
    if (stale) {
      Deno.writeTextFileSync(this.path, kept.map((k) => JSON.stringify(k) + "\n").join("") + line);
    } else {
      Deno.mkdirSync(this.path.slice(0, this.path.lastIndexOf("/")), { recursive: true });
      Deno.writeTextFileSync(this.path, line, { append: true });
    }
  }
}
