/**
 * The thread page's account of what became of its ask (docs/asks.md): the phase in words, then
 * the facts behind it — relays, routing, claim, answers, the no-taker time — worded as the `thread`
 * tool and `wats thread` word them (src/mcp/format.ts). The page is live, so the panel changes as
 * claims and answers arrive.
 *
 * @module
 */

import type { AskState } from "../contracts/views.ts";
import { formatAskPhase, formatAskState } from "../mcp/format.ts";
import { type Markup, markup } from "./markup.ts";

/** The panel for `s`; `now` in ms. */
export function askStatePanel(s: AskState, now: number): Markup {
  const facts = formatAskState(s, Math.floor(now / 1000) * 1000).split("\n")
    .filter((l) => l.startsWith("- "))
    .map((l) => markup`<li>${l.slice(2)}</li>`);
  return markup`<section id="ask-state" class="ask-state ${s.phase}" data-live data-phase="${s.phase}"><h2>What became of this ask</h2><p class="phase">${
    formatAskPhase(s)
  }</p><ul>${facts}</ul></section>`;
}
