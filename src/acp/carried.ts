/**
 * A person's decision on a request that waited while its coding agent was
 * stopped (docs/acp.md, "Parked, stopped and restarted"). The new call on the
 * work tells the coding agent the decision, and the decision answers the
 * request once the agent makes it again — that request and no other: a
 * different one goes to the policy as usual (and parks again when it asks).
 *
 * "The same request" is strict, because the person decided on what
 * `wats agent pending show` showed them:
 *
 * - the same kind;
 * - the same locations, resolved as the policy resolves them (through `..`
 *   and symlinks), in any order;
 * - when the held request had a `rawInput`, an equal `rawInput` (the same
 *   command, paths and content), leaving out only `description`: Claude's
 *   one-line explanation of a shell command, which the model words anew.
 *
 * A held request with neither locations nor a `rawInput` names nothing a later
 * request could be matched with: its decision is carried to none.
 *
 * @module
 */

import { canonicalJson } from "../canonical_json.ts";

/** A permission request as the policy judges it. */
export interface RequestShape {
  /** The ACP tool kind (`other` when none). */
  kind: string;
  /** Its locations, resolved as the policy resolves them. */
  locations: readonly string[];
  /** The request's `rawInput`, when it had one. */
  rawInput?: unknown;
}

/** Fields of a `rawInput` that explain the action rather than make it. */
const DESCRIPTIVE: readonly string[] = ["description"];

/** True when the held request's decision applies to `request`. */
export function sameRequest(held: RequestShape, request: RequestShape): boolean {
  const heldInput = present(held.rawInput);
  if (held.locations.length === 0 && !heldInput) return false;
  if (held.kind !== request.kind) return false;
  if (!sameSet(held.locations, request.locations)) return false;
  if (!heldInput) return true;
  return canonicalJson(identifying(held.rawInput)) === canonicalJson(identifying(request.rawInput));
}

function present(v: unknown): boolean {
  return v !== undefined && v !== null;
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  const x = [...new Set(a)].sort();
  const y = [...new Set(b)].sort();
  return x.length === y.length && x.every((v, i) => v === y[i]);
}

function identifying(input: unknown): unknown {
  if (typeof input !== "object" || input === null || Array.isArray(input)) return input;
  return Object.fromEntries(
    Object.entries(input).filter(([k]) => !DESCRIPTIVE.includes(k)),
  );
}
