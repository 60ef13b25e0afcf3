/**
 * Store and verification benchmarks: `deno bench --allow-all bench/store_bench.ts`.
 *
 * - verified insert: validateEvent (nostr-wasm) + Store.insert, one event per
 *   transaction (baseline) vs 100 per transaction;
 * - insert only: the same without verification, to separate SQLite from crypto;
 * - thread, threadNewest, feed (all, asks, a kind never stored), byTag and search at 10,000 (baseline) and 100,000
 *   posts, so each group reads as "how much slower at 10× the size".
 *
 * Signed events are made once, with nostr-wasm, only for the verified benches; the
 * query stores are filled with well-formed but unsigned events (the store does not
 * verify). Setup takes well under two minutes on two cores.
 *
 * @module
 */

import { initNostrWasm } from "nostr-wasm";
import { nostrKindOf, type WatsKind } from "../src/posts/kinds.ts";
import type { NostrEvent } from "../src/posts/post.ts";
import { validateEvent } from "../src/posts/validate.ts";
import { Store } from "../src/store/store.ts";
import { cyclic } from "./cycle.ts";

const BATCH = 100;
const ITER = 20;
const NOW = 1_790_000_000;
const dir = await Deno.makeTempDir({ prefix: "wats-bench-" });
globalThis.addEventListener("unload", () => Deno.removeSync(dir, { recursive: true }));

// ---- signed pool for the verified benches -------------------------------------------

const nw = await initNostrWasm();
const secrets = Array.from({ length: 8 }, () => nw.generateSecretKey());
/** Each verified bench runs ITER measured iterations plus warmups: give it room. */
const PER_BENCH = (ITER + 5) * BATCH;
function signedPool(n: number, tag: string): NostrEvent[] {
  return Array.from({ length: n }, (_, i) => {
    const e = {
      kind: nostrKindOf("note"),
      created_at: NOW + i,
      tags: [["t", `cap:${tag}`]],
      content: `${tag} event ${i}: some text to index and verify`,
    } as NostrEvent;
    nw.finalizeEvent(e, cyclic(secrets, i));
    return e;
  });
}
const pools = { single: signedPool(PER_BENCH, "single"), batched: signedPool(PER_BENCH, "batch") };
const OPTS = { nowMs: (NOW + 10 * PER_BENCH) * 1000, maxSkewMs: 600_000 };

function take(pool: NostrEvent[], cursor: { i: number }, n: number): NostrEvent[] {
  if (cursor.i + n > pool.length) throw new Error("bench pool exhausted: raise PER_BENCH");
  const out = pool.slice(cursor.i, cursor.i + n);
  cursor.i += n;
  return out;
}

// ---- unsigned events for the query stores -------------------------------------------

const AUTHORS = Array.from({ length: 50 }, (_, i) => i.toString(16).padStart(64, "0"));
const KINDS: WatsKind[] = ["ask", "answer", "clarify", "note", "react", "progress"];
let counter = 0;
function fakeId(): string {
  return (++counter).toString(16).padStart(64, "a");
}
const FAKE_SIG = "0".repeat(128);

function fake(
  kind: WatsKind,
  content: string,
  tags: string[][],
  by: { author: string; at: number },
) {
  const { author, at } = by;
  return {
    id: fakeId(),
    pubkey: author,
    created_at: at,
    kind: nostrKindOf(kind),
    tags,
    content,
    sig: FAKE_SIG,
  } satisfies NostrEvent;
}

/** `posts` posts in threads of 100 (a root and 99 replies); 1% carry a rare cap. */
function fillStore(path: string, posts: number): { store: Store; roots: string[] } {
  const store = Store.open(path);
  const roots: string[] = [];
  let batch: NostrEvent[] = [];
  let root: NostrEvent | undefined;
  let prev: NostrEvent | undefined;
  for (let i = 0; i < posts; i++) {
    const author = cyclic(AUTHORS, i);
    const caps = i % 100 === 7 ? [["t", "cap:rare"]] : i % 10 === 3 ? [["t", "cap:common"]] : [];
    const text = `post ${i} about topic${i % 500} and word${i % 37}`;
    let e: NostrEvent;
    if (i % 100 === 0) {
      e = fake("ask", text, [["subject", `question ${i}`], ...caps], { author, at: NOW + i });
      root = e;
      roots.push(e.id);
    } else {
      const parent = i % 3 === 0 && prev ? prev : root!;
      const links = parent === root
        ? [["e", root!.id, "", "root"]]
        : [["e", root!.id, "", "root"], ["e", parent.id, "", "reply"]];
      e = fake(
        cyclic(KINDS, i),
        text,
        [...links, ["p", parent.pubkey], ...caps],
        { author, at: NOW + i },
      );
    }
    prev = e;
    batch.push(e);
    if (batch.length === 1000) {
      store.insert(batch, { origin: "remote" });
      batch = [];
    }
  }
  if (batch.length) store.insert(batch, { origin: "remote" });
  return { store, roots };
}

const small = fillStore(`${dir}/q10k.db`, 10_000);
const large = fillStore(`${dir}/q100k.db`, 100_000);
const sizes = [["10k", small, true], ["100k", large, false]] as const;

// ---- verified inserts ---------------------------------------------------------------

{
  const single = Store.open(`${dir}/single.db`);
  const batched = Store.open(`${dir}/batched.db`);
  const cs = { i: 0 };
  const cb = { i: 0 };
  Deno.bench({
    name: "verify + insert 100 events, one transaction each",
    group: "verified insert",
    baseline: true,
    n: ITER,
    warmup: 1,
    async fn() {
      for (const e of take(pools.single, cs, BATCH)) {
        const r = await validateEvent(e, OPTS);
        if (!r.ok) throw new Error(r.reason);
        single.insert([r.event], { origin: "remote" });
      }
    },
  });
  Deno.bench({
    name: "verify + insert 100 events, one transaction",
    group: "verified insert",
    n: ITER,
    warmup: 1,
    async fn() {
      const ok: NostrEvent[] = [];
      for (const e of take(pools.batched, cb, BATCH)) {
        const r = await validateEvent(e, OPTS);
        if (!r.ok) throw new Error(r.reason);
        ok.push(r.event);
      }
      batched.insert(ok, { origin: "remote" });
    },
  });
}

{
  const single = Store.open(`${dir}/raw-single.db`);
  const batched = Store.open(`${dir}/raw-batched.db`);
  Deno.bench({
    name: "insert 100 events, one transaction each",
    group: "insert only",
    baseline: true,
    fn() {
      for (let i = 0; i < BATCH; i++) {
        single.insert([
          fake("note", `x ${i}`, [["t", "cap:a"]], { author: cyclic(AUTHORS, 0), at: NOW }),
        ], {
          origin: "remote",
        });
      }
    },
  });
  Deno.bench({
    name: "insert 100 events, one transaction",
    group: "insert only",
    fn() {
      const events = [];
      for (let i = 0; i < BATCH; i++) {
        events.push(
          fake("note", `x ${i}`, [["t", "cap:a"]], { author: cyclic(AUTHORS, 0), at: NOW }),
        );
      }
      batched.insert(events, { origin: "remote" });
    },
  });
}

// ---- queries ------------------------------------------------------------------------

for (const [label, { store, roots }, baseline] of sizes) {
  const mid = roots[Math.floor(roots.length / 2)];
  if (mid === undefined) {
    throw new Error(`error: the ${label} store has no threads; store at least 100 posts`);
  }
  const midSeq = Math.floor(store.maxSeq() / 2);
  Deno.bench({
    name: `thread of 100 posts, ${label} stored`,
    group: "thread",
    baseline,
    fn() {
      if (store.thread(mid).length !== 100) throw new Error("thread size");
    },
  });
  Deno.bench({
    name: `threadNewest 62, ${label} stored`,
    group: "threadNewest",
    baseline,
    fn() {
      store.threadNewest(mid, 62);
    },
  });
  Deno.bench({
    name: `feed page of 100, ${label} stored`,
    group: "feed",
    baseline,
    fn() {
      store.feed({ sinceSeq: midSeq, limit: 100 });
    },
  });
  Deno.bench({
    name: `feed page of 100 asks (1 post in 6), ${label} stored`,
    group: "feed asks",
    baseline,
    fn() {
      store.feed({ sinceSeq: midSeq, limit: 100, kinds: ["ask"] });
    },
  });
  Deno.bench({
    name: `feed page of 100 offers (none stored), ${label} stored`,
    group: "feed rare kind",
    baseline,
    fn() {
      if (store.feed({ sinceSeq: midSeq, limit: 100, kinds: ["offer"] }).posts.length !== 0) {
        throw new Error("the filler stores no offer");
      }
    },
  });
  Deno.bench({
    name: `byTag t=cap:rare limit 50 (1% of posts), ${label} stored`,
    group: "byTag",
    baseline,
    fn() {
      if (store.byTag("t", "cap:rare", { limit: 50 }).length !== 50) throw new Error("byTag");
    },
  });
  Deno.bench({
    name: `search one word, limit 20, ${label} stored`,
    group: "search",
    baseline,
    fn() {
      store.search("topic42", { limit: 20 });
    },
  });
}
