/**
 * An MCP `Transport` over one socket connection: newline-delimited JSON-RPC
 * both ways, as on stdio. The peer is untrusted: a line that is not JSON-RPC is
 * reported through `onerror` and skipped, an over-long line or a broken
 * connection closes the transport, and nothing here throws into the server.
 *
 * @module
 */

import { deserializeMessage, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { writeAll } from "../io/write_all.ts";

/** Longest JSON-RPC line accepted from a peer (a post is ≤ 32 KiB; this leaves room). */
export const MAX_LINE_BYTES = 4 * 1024 * 1024;

/** The part of `Deno.Conn` the transport uses. */
export interface ByteConn {
  read(p: Uint8Array): Promise<number | null>;
  write(p: Uint8Array): Promise<number>;
  close(): void;
}

/** A line that grew past the limit: the peer is not speaking the protocol. */
export class LineTooLongError extends Error {
  constructor(limit: number) {
    super(`a line longer than ${limit} bytes arrived; closing the connection`);
    this.name = "LineTooLongError";
  }
}

/** Reads `\n`-terminated lines from a connection, keeping what follows a line. */
export class LineReader {
  #conn: ByteConn;
  #max: number;
  #buf = new Uint8Array(0);
  #scanned = 0;
  #chunk = new Uint8Array(64 * 1024);
  #decoder = new TextDecoder();

  constructor(conn: ByteConn, maxLineBytes = MAX_LINE_BYTES) {
    this.#conn = conn;
    this.#max = maxLineBytes;
  }

  /**
   * The next line without its `\n` (and `\r`), or null at the end of input (an
   * unterminated last line is dropped). Throws {@linkcode LineTooLongError} when
   * a line exceeds the limit, and whatever the connection's read throws.
   */
  async readLine(): Promise<string | null> {
    while (true) {
      const nl = this.#buf.indexOf(10, this.#scanned);
      if (nl >= 0) {
        const line = this.#decoder.decode(this.#buf.subarray(0, nl));
        this.#buf = this.#buf.slice(nl + 1);
        this.#scanned = 0;
        return line.endsWith("\r") ? line.slice(0, -1) : line;
      }
      this.#scanned = this.#buf.length;
      if (this.#buf.length > this.#max) throw new LineTooLongError(this.#max);
      const n = await this.#conn.read(this.#chunk);
      if (n === null) return null;
      const next = new Uint8Array(this.#buf.length + n);
      next.set(this.#buf);
      next.set(this.#chunk.subarray(0, n), this.#buf.length);
      this.#buf = next;
    }
  }
}

/** The MCP transport of one accepted connection. */
export class ConnTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  #conn: ByteConn;
  #reader: LineReader;
  #closed = false;
  #writing: Promise<void> = Promise.resolve();
  #encoder = new TextEncoder();

  /** `reader` must read from `conn`; pass the one that read the hello line. */
  constructor(conn: ByteConn, reader: LineReader = new LineReader(conn)) {
    this.#conn = conn;
    this.#reader = reader;
  }

  /** True once the transport closed, for any reason. */
  get closed(): boolean {
    return this.#closed;
  }

  start(): Promise<void> {
    this.#readLoop();
    return Promise.resolve();
  }

  async #readLoop(): Promise<void> {
    while (!this.#closed) {
      let line: string | null;
      try {
        line = await this.#reader.readLine();
      } catch (err) {
        if (!this.#closed && err instanceof LineTooLongError) this.onerror?.(err);
        break;
      }
      if (line === null) break;
      if (line.trim() === "") continue;
      let message: JSONRPCMessage;
      try {
        message = deserializeMessage(line);
      } catch {
        this.onerror?.(new Error(`skipped a line that is not JSON-RPC (${line.length} chars)`));
        continue;
      }
      try {
        this.onmessage?.(message);
      } catch (err) {
        this.onerror?.(err instanceof Error ? err : new Error(String(err)));
      }
    }
    await this.close();
  }

  send(message: JSONRPCMessage): Promise<void> {
    if (this.#closed) return Promise.reject(new Error("the MCP connection is closed"));
    const bytes = this.#encoder.encode(serializeMessage(message));
    const done = this.#writing.then(() => writeAll(this.#conn, bytes));
    this.#writing = done.catch(() => {
      // A peer that went away: close once, quietly; the send's caller sees the error.
      void this.close();
    });
    return done;
  }

  close(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    this.#closed = true;
    try {
      this.#conn.close();
    } catch {
      // Already closed by the peer or by a failed write.
    }
    this.onclose?.();
    return Promise.resolve();
  }
}
