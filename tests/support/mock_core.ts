/**
 * What the scripted model mocks share, whatever their wire format: a server on
 * a random port of 127.0.0.1, the request log, the script (rules tried in
 * order, then a default), replies that may hang until the mock closes, and
 * `close()` / `await using`. tests/support/mock_anthropic.ts and
 * tests/support/mock_openai.ts each add their own routes and encoding.
 *
 * @module
 */

/** One rule of a script: when `when` holds for a request body, answer with `reply`. */
export interface MockRule<Req, Reply> {
  when: (req: Req) => boolean;
  reply: Reply | ((req: Req) => Reply);
}

/** A mock's script: rules tried in order, then the default reply. */
export interface MockScript<Req, Reply> {
  rules?: MockRule<Req, Reply>[];
  /** The reply when no rule matches; each mock names its own when unset. */
  default?: Reply | ((req: Req) => Reply);
}

/** One request a mock received. */
export interface MockRequest<Req> {
  method: string;
  /** Path and query, e.g. `/v1/messages?beta=true`. */
  path: string;
  headers: Record<string, string>;
  /** The parsed JSON body, or undefined for requests without one. */
  body: Req | undefined;
  /** Which reply was sent: the index of the matching rule, `"default"`, or `"none"`. */
  matched: number | "default" | "none";
}

/** The script's reply to `body`, and which rule chose it. */
export function chooseReply<Req, Reply>(
  script: MockScript<Req, Reply>,
  fallback: Reply,
  body: Req,
): { reply: Reply; matched: number | "default" } {
  const rules = script.rules ?? [];
  for (const [i, rule] of rules.entries()) {
    if (rule.when(body)) {
      const r = rule.reply;
      return { reply: typeof r === "function" ? (r as (q: Req) => Reply)(body) : r, matched: i };
    }
  }
  const d = script.default ?? fallback;
  return {
    reply: typeof d === "function" ? (d as (q: Req) => Reply)(body) : d,
    matched: "default",
  };
}

/** What a mock's wire handler gets besides the request. */
export interface MockContext<Req> {
  /** The log entry of this request: set `body` and `matched` on it. */
  rec: MockRequest<Req>;
  /** The next id of this mock, six digits (`000001`), for message and call ids. */
  nextId(): string;
  /** Waits `ms`, or less when the mock closes first, so `close()` never waits a hang out. */
  delay(ms: number): Promise<void>;
}

/** A running mock: its URL and request log. */
export interface MockServer<Req> extends AsyncDisposable {
  /** The server's root, e.g. `http://127.0.0.1:40123`. */
  url: string;
  /** Every request received so far, in arrival order (live array). */
  requests: MockRequest<Req>[];
  /** Stops the server and waits for it to finish. Safe to call twice. */
  close(): Promise<void>;
}

/**
 * Starts a mock whose wire format is `handle`: every request is logged before
 * `handle` sees it. Requires `--allow-net=127.0.0.1`.
 */
export function serveMock<Req>(
  handle: (request: Request, ctx: MockContext<Req>) => Promise<Response>,
): MockServer<Req> {
  const requests: MockRequest<Req>[] = [];
  let next = 1;
  const nextId = () => (next++).toString().padStart(6, "0");
  const closing = new AbortController();
  const delay = (ms: number) =>
    new Promise<void>((r) => {
      const t = setTimeout(r, ms);
      closing.signal.addEventListener("abort", () => {
        clearTimeout(t);
        r();
      }, { once: true });
    });
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => {
    const u = new URL(request.url);
    const rec: MockRequest<Req> = {
      method: request.method,
      path: u.pathname + u.search,
      headers: Object.fromEntries(request.headers),
      body: undefined,
      matched: "none",
    };
    requests.push(rec);
    return handle(request, { rec, nextId, delay });
  });
  let closed: Promise<void> | undefined;
  const close = () => {
    closing.abort();
    return closed ??= server.shutdown();
  };
  return {
    url: `http://127.0.0.1:${(server.addr as Deno.NetAddr).port}`,
    requests,
    close,
    [Symbol.asyncDispose]: close,
  };
}

/** Splits a string in two halves, so clients must join streamed deltas. */
export function halves(s: string): string[] {
  if (s.length < 2) return [s];
  const mid = Math.floor(s.length / 2);
  return [s.slice(0, mid), s.slice(mid)];
}

/** A rough token count (4 characters a token), so usage grows with the conversation. */
export function estimateTokens(conversation: unknown): number {
  return Math.max(1, Math.ceil(JSON.stringify(conversation ?? []).length / 4));
}

/** A server-sent-events response of `events`, each `[name, data]`. */
export function sseResponse(events: [string, unknown][]): Response {
  const enc = new TextEncoder();
  const chunks = events.map(([name, data]) =>
    enc.encode(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`)
  );
  return new Response(
    new ReadableStream({
      start(controller) {
        for (const c of chunks) controller.enqueue(c);
        controller.close();
      },
    }),
    { headers: { "content-type": "text/event-stream", "cache-control": "no-cache" } },
  );
}
