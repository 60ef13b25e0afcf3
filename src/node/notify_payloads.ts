/**
 * A notice as each kind of target takes it (docs/notifications.md): a signed
 * JSON POST for a webhook, a text body with headers for ntfy, `{text}` for a
 * Slack incoming webhook. Pure, so every byte a receiver sees is unit-tested.
 *
 * The webhook signature covers the timestamp and the body, `<t>.<body>`, so a
 * receiver that refuses old timestamps refuses a replayed request
 * (docs/decisions/notify.md).
 *
 * @module
 */

import { hmac } from "@noble/hashes/hmac.js";
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex } from "@noble/hashes/utils.js";
import type { NotifyTarget } from "../config/notify_tables.ts";
import { VERSION } from "../version.ts";
import type { Notice } from "./notices.ts";

/** One HTTP POST, ready to send. */
export interface NotifyRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/** The signature header: `sha256=` and the hex HMAC-SHA256 of `<timestamp>.<body>`. */
export const SIGNATURE_HEADER = "X-Wats-Signature";
/** The attempt's time in Unix seconds, signed with the body. */
export const TIMESTAMP_HEADER = "X-Wats-Timestamp";
/** The notice's id, the same on each attempt: a receiver drops repeats by it. */
export const DELIVERY_HEADER = "X-Wats-Delivery";
export const EVENT_HEADER = "X-Wats-Event";

/** What a target needs beyond its table: the secret or token its variable held at start. */
export interface TargetSecrets {
  secret?: string;
  token?: string;
}

/** ntfy's priority per event: what blocks work is high (4), the rest default (3). */
const NTFY_PRIORITY: Record<Notice["event"], string> = {
  draft: "3",
  permission: "4",
  in_doubt: "4",
  budget_paused: "3",
  halted: "4",
  run_failed: "3",
  no_taker: "3",
  work_ready: "3",
};

/** A target as it sends: its URL known (read from `url_env` at start when set so). */
export type LiveTarget = NotifyTarget & { url: string };

/** The request that tells `target` about `n`, made at `nowSec` (Unix seconds). */
export function notifyRequest(
  target: LiveTarget,
  n: Notice,
  secrets: TargetSecrets,
  nowSec: number,
): NotifyRequest {
  const agent = { "User-Agent": `wats/${VERSION}` };
  switch (target.type) {
    case "webhook": {
      const body = JSON.stringify({
        event: n.event,
        id: n.id,
        title: n.title,
        text: n.text,
        command: n.command,
        path: n.path,
        at: n.at,
        node: n.node,
      });
      const t = String(Math.floor(nowSec));
      return {
        url: target.url,
        headers: {
          ...agent,
          "Content-Type": "application/json",
          [EVENT_HEADER]: n.event,
          [DELIVERY_HEADER]: n.id,
          [TIMESTAMP_HEADER]: t,
          [SIGNATURE_HEADER]: `sha256=${signature(secrets.secret ?? "", t, body)}`,
        },
        body,
      };
    }
    case "ntfy":
      return {
        url: target.url,
        headers: {
          ...agent,
          "Content-Type": "text/plain; charset=utf-8",
          // Header values are bytes: the title is ours and ASCII; the text goes in the body.
          Title: n.title,
          Tags: `wats,${n.event}`,
          Priority: NTFY_PRIORITY[n.event],
          ...(secrets.token ? { Authorization: `Bearer ${secrets.token}` } : {}),
        },
        body: `${n.text}\n\nAnswer: ${n.command} (dashboard ${n.path})`,
      };
    case "slack":
      return {
        url: target.url,
        headers: { ...agent, "Content-Type": "application/json" },
        body: JSON.stringify({
          text: `*${slackEscape(n.title)}*\n${slackEscape(n.text)}\nAnswer: \`${
            slackEscape(n.command)
          }\` (dashboard ${slackEscape(n.path)})`,
        }),
      };
  }
}

/** The hex HMAC-SHA256 of `<timestamp>.<body>` with `secret`: what a receiver recomputes. */
export function signature(secret: string, timestamp: string, body: string): string {
  const enc = new TextEncoder();
  return bytesToHex(hmac(sha256, enc.encode(secret), enc.encode(`${timestamp}.${body}`)));
}

/**
 * Slack reads `&`, `<` and `>` as markup (`<!channel>` pings everyone): an
 * agent's words are escaped so they show as text.
 */
export function slackEscape(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}
