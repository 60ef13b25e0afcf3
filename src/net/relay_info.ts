/**
 * What the relay endpoint answers to plain HTTP: the NIP-11 relay information
 * document, which states the caps a client must keep to, or a line saying to
 * connect with a WebSocket.
 *
 * @module
 */

import { MAX_TAGS, MAX_TEXT_BYTES } from "../posts/post.ts";
import { type Limits, MAX_MESSAGE_CHARS, MAX_SUB_ID_CHARS } from "./relay_caps.ts";
import type { HttpAnswer, RequestHead } from "./ws_server.ts";

/**
 * The NIP-11 document for `Accept: application/nostr+json`, else a short text.
 * `authRequired`: `net.auth = "required"` (NIP-42 before anything is served).
 */
export function infoResponse(
  req: RequestHead,
  limits: Limits,
  authRequired = false,
): HttpAnswer {
  if (!(req.headers.get("accept") ?? "").includes("application/nostr+json")) {
    return {
      status: 200,
      headers: { "content-type": "text/plain; charset=utf-8" },
      body: "This is the Nostr relay endpoint of a wats node: connect with a WebSocket.\n",
    };
  }
  const body = JSON.stringify({
    name: "wats node",
    description: "The relay endpoint of a wats node: wats posts only (kinds 4470–4481 and 14480).",
    software: "wats",
    supported_nips: [1, 11, 42],
    limitation: {
      max_message_length: MAX_MESSAGE_CHARS,
      max_subscriptions: limits.maxSubscriptions,
      max_limit: limits.maxLimit,
      max_subid_length: MAX_SUB_ID_CHARS,
      max_event_tags: MAX_TAGS,
      max_content_length: MAX_TEXT_BYTES,
      auth_required: authRequired,
      restricted_writes: authRequired,
    },
  });
  return {
    status: 200,
    headers: { "content-type": "application/nostr+json", "access-control-allow-origin": "*" },
    body,
  };
}
