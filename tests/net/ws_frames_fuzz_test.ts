/**
 * The WebSocket frame reader (src/net/ws_frames.ts) against seeded random and
 * mutated input, like the event validator's fuzz test (tests/posts/): thousands of
 * byte streams fed in random chunks, read as a client and as a server. Whatever
 * comes, the reader returns frames that keep the protocol's rules (RFC 6455:
 * reserved bits clear, control frames short and whole, length within the cap) or
 * fails with its own `FrameError` and a close code; it never throws anything else,
 * never loops without consuming input, and its buffer stays within twice the
 * frame cap. A failure replays from the seed in the test.
 */

import assert from "node:assert/strict";
import { frame, FrameError, FrameReader } from "../../src/net/ws_frames.ts";
import { seededRandom } from "../support/seeded_random.ts";

const CAP = 4096;
const INITIAL = 256;
const CLOSE_CODES = new Set([1002, 1009]);

/** A connection that hands out `bytes` in chunks of random size, then ends. */
function chunkedConn(bytes: Uint8Array, r: () => number) {
  let at = 0;
  let largestBuffer = 0;
  const conn = {
    read(into: Uint8Array): Promise<number | null> {
      largestBuffer = Math.max(largestBuffer, into.buffer.byteLength);
      if (at >= bytes.length) return Promise.resolve(null);
      const n = Math.min(into.length, bytes.length - at, 1 + Math.floor(r() * 700));
      into.set(bytes.subarray(at, at + n));
      at += n;
      return Promise.resolve(n);
    },
  };
  return { conn: conn as unknown as Deno.Conn, largestBuffer: () => largestBuffer };
}

interface Read {
  frames: { fin: boolean; opcode: number; payload: Uint8Array }[];
  error?: FrameError;
}

/** Reads every frame of `bytes`; asserts the reader's promises on the way. */
async function readAll(bytes: Uint8Array, fromClient: boolean, r: () => number): Promise<Read> {
  const { conn, largestBuffer } = chunkedConn(bytes, r);
  const reader = new FrameReader(conn, CAP, fromClient, INITIAL);
  const frames: Read["frames"] = [];
  // Each step takes a frame (at least 2 bytes) or reads at least 1 byte: more
  // steps than that would be a loop that consumes nothing.
  const maxSteps = 2 * bytes.length + 2;
  let steps = 0;
  try {
    for (;;) {
      assert.ok(++steps <= maxSteps, `no progress after ${steps} steps`);
      const f = reader.take();
      if (f === undefined) {
        if (!await reader.fill()) break;
        continue;
      }
      assert.ok(f.length <= CAP, `a frame of ${f.length} bytes passed the cap`);
      assert.equal(f.payload().length, f.length);
      if (f.opcode >= 8) assert.ok(f.fin && f.length <= 125, "a long or fragmented control frame");
      frames.push({ fin: f.fin, opcode: f.opcode, payload: f.payload().slice() });
    }
  } catch (err) {
    if (!(err instanceof FrameError)) throw err;
    assert.ok(CLOSE_CODES.has(err.code), `close code ${err.code}`);
    return { frames, error: err };
  } finally {
    // The buffer grows only to hold one frame: the cap and its header, doubled at most.
    assert.ok(largestBuffer() <= 2 * (CAP + 14) + INITIAL, `buffer of ${largestBuffer()} bytes`);
  }
  assert.ok(reader.held < 14 + CAP, `${reader.held} bytes held at the end`);
  return { frames };
}

/** A valid stream of frames as `fromClient`'s peer sends them (masked from a client). */
function validStream(r: () => number, fromClient: boolean) {
  const sent: Read["frames"] = [];
  const parts: Uint8Array[] = [];
  const count = 1 + Math.floor(r() * 6);
  for (let i = 0; i < count; i++) {
    const control = r() < 0.3;
    const opcode = control ? [8, 9, 10][Math.floor(r() * 3)]! : [0, 1, 2][Math.floor(r() * 3)]!;
    const sizes = control ? [0, 1, 125] : [0, 1, 125, 126, 127, 1000, 65535, 65536, CAP];
    const len = Math.min(sizes[Math.floor(r() * sizes.length)]!, CAP);
    const payload = Uint8Array.from({ length: len }, () => Math.floor(r() * 256));
    const bytes = frame(opcode, payload, fromClient);
    // `frame` always sets FIN; a data frame may be a fragment.
    const fin = control || r() < 0.7;
    if (!fin) bytes[0] = bytes[0]! & 0x7f;
    parts.push(bytes);
    sent.push({ fin, opcode, payload });
  }
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return { bytes: out, sent };
}

Deno.test("valid frames in random chunks are read back whole, as a client and as a server", async () => {
  const r = seededRandom(2455);
  for (let i = 0; i < 500; i++) {
    const fromClient = i % 2 === 0;
    const { bytes, sent } = validStream(r, fromClient);
    const got = await readAll(bytes, fromClient, r);
    assert.equal(got.error, undefined, `stream ${i}: ${got.error?.message}`);
    assert.deepEqual(got.frames, sent, `stream ${i}`);
  }
});

Deno.test("random bytes: the reader fails with its own error or returns rule-abiding frames, never anything else", async () => {
  const r = seededRandom(6455);
  let refused = 0;
  for (let i = 0; i < 3000; i++) {
    const bytes = Uint8Array.from({ length: Math.floor(r() * 300) }, () => Math.floor(r() * 256));
    if ((await readAll(bytes, i % 2 === 0, r)).error) refused++;
  }
  // Most random first bytes set a reserved bit or the wrong mask: refused.
  assert.ok(refused > 2000, `${refused} of 3000 refused`);
});

Deno.test("mutated valid streams (bit flips, cut, spliced, huge lengths) never break the reader", async () => {
  const r = seededRandom(1002);
  const outcomes = { refused: 0, read: 0 };
  for (let i = 0; i < 3000; i++) {
    const fromClient = i % 2 === 1;
    let { bytes } = validStream(r, fromClient);
    const mutations = 1 + Math.floor(r() * 4);
    for (let m = 0; m < mutations; m++) {
      const at = Math.floor(r() * bytes.length);
      switch (Math.floor(r() * 5)) {
        case 0: // flip a bit
          bytes[at] = bytes[at]! ^ (1 << Math.floor(r() * 8));
          break;
        case 1: // cut the stream short
          bytes = bytes.slice(0, at);
          break;
        case 2: // splice random bytes in
          bytes = Uint8Array.from([
            ...bytes.subarray(0, at),
            ...Array.from({ length: 1 + Math.floor(r() * 20) }, () => Math.floor(r() * 256)),
            ...bytes.subarray(at),
          ]);
          break;
        case 3: // a 64-bit length, up to 2^64 - 1
          bytes = Uint8Array.from([
            bytes[0] ?? 0x81,
            (fromClient ? 0x80 : 0) | 127,
            ...Array.from({ length: 8 }, () => r() < 0.5 ? 0xff : Math.floor(r() * 256)),
            ...bytes.subarray(2),
          ]);
          break;
        default: // a reserved bit
          if (bytes.length > 0) bytes[0] = bytes[0]! | [0x40, 0x20, 0x10][Math.floor(r() * 3)]!;
      }
    }
    const got = await readAll(bytes, fromClient, r);
    if (got.error) outcomes.refused++;
    else if (got.frames.length > 0) outcomes.read++;
  }
  // Both ends are exercised: mutations the reader refuses, and ones it still reads.
  assert.ok(outcomes.refused > 300 && outcomes.read > 300, JSON.stringify(outcomes));
});

Deno.test("a frame with any reserved bit set is refused with 1002 (RFC 6455 §5.2), even a ping", async () => {
  const r = seededRandom(1);
  for (const rsv of [0x40, 0x20, 0x10, 0x70]) {
    for (const opcode of [1, 2, 9]) {
      for (const fromClient of [true, false]) {
        const bytes = frame(opcode, new TextEncoder().encode("x"), fromClient);
        bytes[0] = bytes[0]! | rsv;
        const got = await readAll(bytes, fromClient, r);
        assert.equal(got.frames.length, 0);
        assert.equal(got.error?.code, 1002, `rsv ${rsv} opcode ${opcode}`);
        assert.match(got.error.message, /RSV/);
      }
    }
  }
});
