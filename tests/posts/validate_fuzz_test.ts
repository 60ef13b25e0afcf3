import assert from "node:assert/strict";
import { deriveProfileKey } from "../../src/identity/profile_key.ts";
import { buildPost } from "../../src/posts/post.ts";
import { validateEvent } from "../../src/posts/validate.ts";
import { seededRandom as rng } from "../support/seeded_random.ts";

const NOW_MS = 1_790_000_000_000;
const OPTS = { nowMs: NOW_MS, maxSkewMs: 600_000 };
const key = deriveProfileKey(new Uint8Array(32).fill(3), "fuzz");

function junk(r: () => number, depth = 0): unknown {
  const pick = Math.floor(r() * (depth > 3 ? 6 : 9));
  switch (pick) {
    case 0:
      return null;
    case 1:
      return r() < 0.5;
    case 2:
      return [0, -1, 1.5, NaN, Infinity, 1e308, 2 ** 53, 4470][Math.floor(r() * 8)];
    case 3:
      return "x".repeat(Math.floor(r() * 100));
    case 4:
      return String.fromCharCode(...Array.from({ length: 20 }, () => Math.floor(r() * 0xffff)));
    case 5:
      return undefined;
    case 6:
      return Array.from({ length: Math.floor(r() * 5) }, () => junk(r, depth + 1));
    default: {
      const o: Record<string, unknown> = {};
      for (const k of ["id", "pubkey", "sig", "kind", "created_at", "content", "tags", "z"]) {
        if (r() < 0.7) o[k] = junk(r, depth + 1);
      }
      return o;
    }
  }
}

async function neverThrows(input: unknown): Promise<void> {
  const result = await validateEvent(input, OPTS);
  assert.equal(typeof result.ok, "boolean");
  if (!result.ok) assert.equal(typeof result.reason, "string");
}

Deno.test("validation never throws on random JSON-like junk", async () => {
  const r = rng(42);
  for (let i = 0; i < 3000; i++) {
    const input = junk(r);
    const result = await validateEvent(input, OPTS);
    assert.equal(result.ok, false, JSON.stringify(input));
  }
});

Deno.test("validation never throws on mutated signed events, and accepts none of them", async () => {
  const r = rng(7);
  const base = buildPost(
    { kind: "answer", text: "base", root: "a".repeat(64), createdAt: NOW_MS / 1000 },
    key.secret,
  );
  const fields = ["id", "pubkey", "sig", "content", "created_at", "kind", "tags"] as const;
  for (let i = 0; i < 300; i++) {
    const e: Record<string, unknown> = structuredClone(base);
    const f = fields[Math.floor(r() * fields.length)]!;
    const v = e[f];
    if (typeof v === "string" && v.length > 0) {
      const at = Math.floor(r() * v.length);
      const ch = "0123456789abcdef"[Math.floor(r() * 16)];
      const next = v.slice(0, at) + ch + v.slice(at + 1);
      if (next === v) continue;
      e[f] = next;
    } else if (typeof v === "number") {
      e[f] = v + 1 + Math.floor(r() * 3);
    } else {
      e[f] = [["e", "a".repeat(64), "", "root"], ["x", String(i)]];
    }
    const result = await validateEvent(e, OPTS);
    assert.equal(result.ok, false, `mutated ${f}`);
  }
});

Deno.test("validation never throws on huge, deep or hostile input", async () => {
  const base = buildPost({ kind: "note", text: "x", createdAt: NOW_MS / 1000 }, key.secret);
  await neverThrows({ ...base, content: "x".repeat(20_000_000) });
  await neverThrows({ ...base, tags: Array.from({ length: 1_000_000 }, () => ["t", "x"]) });
  await neverThrows({ ...base, tags: [["t", "x".repeat(10_000_000)]] });
  let deep: unknown = [];
  for (let i = 0; i < 100_000; i++) deep = [deep];
  await neverThrows({ ...base, tags: deep });
  await neverThrows({ ...base, tags: [deep] });
  await neverThrows(
    new Proxy({}, {
      get() {
        throw new Error("boom");
      },
    }),
  );
  await neverThrows({
    ...base,
    get sig() {
      throw new Error("boom");
    },
  });
  await neverThrows(Object.create(null));
  await neverThrows({ ...base, tags: new Proxy([], { get: () => 5 }) });
});
