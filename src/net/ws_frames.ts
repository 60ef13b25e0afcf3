/**
 * RFC 6455 framing shared by the relay client (`ws_client.ts`) and the relay
 * endpoint (`ws_server.ts`): reading frames from a connection with one buffer for
 * its life, and building a frame in one buffer so it leaves in one write.
 *
 * The reader checks what does not depend on the side: the reserved bits RSV1–3
 * are clear (§5.2: they mean an extension, and neither side offers one, so a peer
 * that sets them speaks something this reader cannot decode), a control frame
 * carries at most 125 bytes and is never fragmented (§5.5), a frame is no longer
 * than the caller's cap, and frames are masked exactly when they come from a
 * client (§5.1). Each check fails before the payload is read, with the close code
 * to send. tests/net/ws_frames_fuzz_test.ts feeds it seeded random and mutated
 * frames.
 *
 * @module
 */

/** A frame that breaks the protocol or a cap: close with `code`. */
export class FrameError extends Error {
  constructor(readonly code: number, message: string) {
    super(message);
  }
}

/**
 * The frame {@linkcode FrameReader.take} returned: one object per reader, reused, and
 * valid until the next `take` or `fill`. Reading a flood of pings allocates nothing.
 */
export interface Frame {
  readonly fin: boolean;
  readonly opcode: number;
  readonly length: number;
  /** A view of the payload into the reader's buffer. */
  payload(): Uint8Array;
  /** Copies the payload to the start of `to` (which must be long enough). */
  copyPayload(to: Uint8Array): void;
}

/** Reads frames (and, before them, an HTTP head) from one connection. */
export class FrameReader {
  readonly #conn: Deno.Conn;
  readonly #maxFrameBytes: number;
  readonly #fromClient: boolean;
  // What was read and not yet parsed is `#buf[#pos..#end]`. The buffer grows only
  // while a frame does not fit (to about twice the cap) and returns to its first
  // size once emptied after a short frame; a flood of frames, short or long,
  // allocates nothing per read.
  readonly #initialBytes: number;
  #buf: Uint8Array;
  #pos = 0;
  #end = 0;
  readonly #frame = new ReusedFrame();
  /** The payload length of the last frame taken. */
  #lastLength = 0;
  /** Bytes read from the connection so far (HTTP head and frames): what the peer sent. */
  bytesRead = 0;

  /**
   * @param maxFrameBytes longer frames fail with 1009 before they are read.
   * @param fromClient the peer is a client: its frames must be masked (else unmasked).
   * @param initialBytes the read buffer's size while no long frame is being read: a
   *   server with hundreds of clients keeps it small.
   */
  constructor(
    conn: Deno.Conn,
    maxFrameBytes: number,
    fromClient: boolean,
    initialBytes = 64 * 1024,
  ) {
    this.#initialBytes = initialBytes;
    this.#buf = new Uint8Array(initialBytes);
    this.#conn = conn;
    this.#maxFrameBytes = maxFrameBytes;
    this.#fromClient = fromClient;
  }

  /** Bytes read from the connection and not yet returned. */
  get held(): number {
    return this.#end - this.#pos;
  }

  /**
   * The bytes up to the first empty line (an HTTP head, without it), or null when
   * the connection ends first or the head passes `maxBytes`.
   */
  async readHead(maxBytes: number): Promise<Uint8Array | null> {
    // Bytes after `#pos` already searched (positions move when the buffer compacts).
    let searched = 0;
    for (;;) {
      const b = this.#buf;
      for (let i = this.#pos + Math.max(0, searched - 3); i + 3 < this.#end; i++) {
        if (b[i] === 13 && b[i + 1] === 10 && b[i + 2] === 13 && b[i + 3] === 10) {
          const head = b.slice(this.#pos, i);
          this.#pos = i + 4;
          return head;
        }
      }
      if (this.held > maxBytes) return null;
      searched = this.held;
      if (!await this.#fill()) return null;
    }
  }

  /**
   * The next frame if the buffer holds all of it, else undefined: then
   * {@linkcode fill} and ask again.
   *
   * @throws {FrameError} on a frame that breaks the protocol or the cap.
   */
  take(): Frame | undefined {
    const have = this.#end - this.#pos;
    if (have < 2) return undefined;
    const b = this.#buf;
    const p = this.#pos;
    // `have` counts the bytes from p on: each read below is within it.
    const b0 = b[p]!;
    const b1 = b[p + 1]!;
    if ((b0 & 0x70) !== 0) {
      throw new FrameError(1002, "a frame with RSV bits set, but no extension was negotiated");
    }
    const masked = (b1 & 0x80) !== 0;
    let len = b1 & 127;
    let at = 2;
    if (len === 126 && have >= 4) {
      len = (b[p + 2]! << 8) | b[p + 3]!;
      at = 4;
    } else if (len === 127 && have >= 10) {
      len = Number(new DataView(b.buffer, b.byteOffset + p + 2, 8).getBigUint64(0));
      at = 10;
    } else if (len >= 126) {
      len = -1;
    }
    if ((b0 & 8) !== 0 && (len > 125 || len === -1 || (b0 & 0x80) === 0)) {
      throw new FrameError(1002, "a control frame over 125 bytes or fragmented");
    }
    if (masked !== this.#fromClient) {
      throw new FrameError(
        1002,
        this.#fromClient ? "a client must mask its frames" : "a server must not mask frames",
      );
    }
    if (len > this.#maxFrameBytes) throw new FrameError(1009, "message too big");
    const maskAt = at;
    if (masked) at += 4;
    if (len < 0 || have < at + len) return undefined;
    if (masked) {
      for (let i = 0; i < len; i++) b[p + at + i]! ^= b[p + maskAt + (i & 3)]!;
    }
    const f = this.#frame;
    f.fin = (b0 & 0x80) !== 0;
    f.opcode = b0 & 15;
    f.start = p + at;
    f.length = len;
    f.buf = b;
    this.#pos = p + at + len;
    this.#lastLength = len;
    return f;
  }

  /**
   * Reads more from the connection; false when it ended.
   */
  fill(): Promise<boolean> {
    return this.#fill();
  }

  async #fill(): Promise<boolean> {
    // Back to the first size once emptied after a short frame: not between long
    // frames, which would allocate and copy the buffer up again for each.
    if (
      this.#pos === this.#end && this.#buf.length > this.#initialBytes &&
      this.#lastLength <= this.#initialBytes / 2
    ) {
      this.#buf = new Uint8Array(this.#initialBytes);
      this.#pos = this.#end = 0;
    }
    if (this.#end === this.#buf.length) {
      this.#buf.copyWithin(0, this.#pos, this.#end);
      this.#end -= this.#pos;
      this.#pos = 0;
      if (this.#end === this.#buf.length) {
        const bigger = new Uint8Array(this.#buf.length * 2);
        bigger.set(this.#buf);
        this.#buf = bigger;
      }
    }
    const n = await this.#conn.read(this.#buf.subarray(this.#end));
    if (n === null) return false;
    this.#end += n;
    this.bytesRead += n;
    return true;
  }
}

/** One frame, header and payload in one buffer; masked when `masked` (a client's). */
export function frame(opcode: number, payload: Uint8Array, masked: boolean): Uint8Array {
  const len = payload.length;
  const ext = len < 126 ? 0 : len < 65536 ? 2 : 8;
  const maskBytes = masked ? 4 : 0;
  const out = new Uint8Array(2 + ext + maskBytes + len);
  out[0] = 0x80 | opcode;
  out[1] = (masked ? 0x80 : 0) | (ext === 0 ? len : ext === 2 ? 126 : 127);
  const view = new DataView(out.buffer);
  if (ext === 2) view.setUint16(2, len);
  if (ext === 8) view.setBigUint64(2, BigInt(len));
  const at = 2 + ext + maskBytes;
  if (!masked) {
    out.set(payload, at);
    return out;
  }
  const mask = crypto.getRandomValues(new Uint8Array(4));
  out.set(mask, 2 + ext);
  for (let i = 0; i < len; i++) out[at + i] = payload[i]! ^ mask[i & 3]!;
  return out;
}

/** A close frame's body: the code, then the reason cut to fit 125 bytes. */
export function closeBody(code: number, reason: string): Uint8Array {
  const r = new TextEncoder().encode(reason).subarray(0, 123);
  const body = new Uint8Array(2 + r.length);
  body[0] = code >> 8;
  body[1] = code & 255;
  body.set(r, 2);
  return body;
}

/** Joins byte arrays. */
export function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

class ReusedFrame implements Frame {
  fin = false;
  opcode = 0;
  length = 0;
  start = 0;
  buf: Uint8Array = new Uint8Array(0);

  payload(): Uint8Array {
    return this.buf.subarray(this.start, this.start + this.length);
  }

  copyPayload(to: Uint8Array): void {
    for (let i = 0; i < this.length; i++) to[i] = this.buf[this.start + i]!;
  }
}
