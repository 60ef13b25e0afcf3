/**
 * The node id shown in the banner and status: a short fingerprint of the node
 * secret. It is one-way, so showing it reveals nothing of the secret, and
 * stable for the life of node.key.
 *
 * @module
 */

import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex } from "@noble/hashes/utils.js";

/** The node id: 16 hex characters. */
export function nodeId(nodeSecret: Uint8Array): string {
  const label = new TextEncoder().encode("wats/v1/node-id");
  const input = new Uint8Array(label.length + nodeSecret.length);
  input.set(label);
  input.set(nodeSecret, label.length);
  return bytesToHex(sha256(input)).slice(0, 16);
}
