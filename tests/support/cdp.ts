/**
 * A headless Chromium (Debian's `chromium` package, see debian_tools.ts)
 * driven over the DevTools protocol directly: a WebSocket and a few commands
 * (navigate, evaluate, screenshot) are all the dashboard's tests need, so no
 * npm driver is pulled in. As root, Chromium needs `--no-sandbox`.
 *
 * @module
 */

/** One page of a running browser. */
export interface BrowserPage {
  /** Navigates and waits for the `load` event. */
  goto(url: string): Promise<void>;
  /** Evaluates `expression` in the page and returns its value (promises awaited). */
  evaluate<T>(expression: string): Promise<T>;
  /** Runs `expression` (which should submit a form or follow a link) and waits for the next load. */
  navigateBy(expression: string): Promise<void>;
  /** A PNG of the whole page. */
  screenshot(): Promise<Uint8Array>;
}

/** A browser started by {@linkcode launchChromium}. */
export interface Browser {
  page: BrowserPage;
  close(): Promise<void>;
}

type Pending = { resolve: (v: Record<string, unknown>) => void; reject: (e: Error) => void };

/** Starts headless Chromium with one blank page. Requires `--allow-run --allow-net --allow-write`. */
export async function launchChromium(): Promise<Browser> {
  const profile = await Deno.makeTempDir({ prefix: "wats-chromium-" });
  const child = new Deno.Command("chromium", {
    args: [
      "--headless=new",
      // Chromium refuses to run as root with its sandbox on.
      ...(Deno.uid() === 0 ? ["--no-sandbox"] : []),
      "--disable-gpu",
      "--disable-dev-shm-usage",
      "--no-first-run",
      "--no-default-browser-check",
      "--disable-extensions",
      "--hide-scrollbars",
      "--window-size=1100,900",
      "--remote-debugging-address=127.0.0.1",
      "--remote-debugging-port=0",
      `--user-data-dir=${profile}`,
      "about:blank",
    ],
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const wsUrl = await devtoolsUrl(child.stderr);
  const ws = new WebSocket(wsUrl);
  await new Promise<void>((resolve, reject) => {
    ws.onopen = () => resolve();
    ws.onerror = () => reject(new Error(`cannot connect to Chromium at ${wsUrl}`));
  });
  let nextId = 1;
  const pending = new Map<number, Pending>();
  const listeners = new Set<
    (method: string, params: Record<string, unknown>, session?: string) => void
  >();
  ws.onmessage = (e) => {
    const msg = JSON.parse(e.data as string);
    if (msg.id !== undefined) {
      const p = pending.get(msg.id);
      pending.delete(msg.id);
      if (msg.error) p?.reject(new Error(`${msg.error.message} ${msg.error.data ?? ""}`));
      else p?.resolve(msg.result ?? {});
    } else {
      for (const l of listeners) l(msg.method, msg.params ?? {}, msg.sessionId);
    }
  };
  const send = (method: string, params: Record<string, unknown> = {}, sessionId?: string) =>
    new Promise<Record<string, unknown>>((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve, reject });
      ws.send(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }));
    });
  const { targetInfos } = await send("Target.getTargets") as {
    targetInfos: Array<{ targetId: string; type: string }>;
  };
  const target = targetInfos.find((t) => t.type === "page")!;
  const { sessionId } = await send("Target.attachToTarget", {
    targetId: target.targetId,
    flatten: true,
  }) as { sessionId: string };
  const s = (method: string, params: Record<string, unknown> = {}) =>
    send(method, params, sessionId);
  await s("Page.enable");
  await s("Runtime.enable");

  const nextLoad = () =>
    new Promise<void>((resolve) => {
      const l = (method: string, _p: unknown, session?: string) => {
        if (method === "Page.loadEventFired" && session === sessionId) {
          listeners.delete(l);
          resolve();
        }
      };
      listeners.add(l);
    });
  const evaluate = async <T>(expression: string): Promise<T> => {
    const r = await s("Runtime.evaluate", {
      expression,
      returnByValue: true,
      awaitPromise: true,
    }) as {
      result: { value?: T };
      exceptionDetails?: { text: string; exception?: { description?: string } };
    };
    if (r.exceptionDetails) {
      throw new Error(
        `in the page: ${r.exceptionDetails.exception?.description ?? r.exceptionDetails.text}`,
      );
    }
    return r.result.value as T;
  };
  const page: BrowserPage = {
    async goto(url) {
      const loaded = nextLoad();
      await s("Page.navigate", { url });
      await loaded;
    },
    evaluate,
    async navigateBy(expression) {
      const loaded = nextLoad();
      await evaluate(`(${expression}, true)`);
      await loaded;
    },
    async screenshot() {
      const { data } = await s("Page.captureScreenshot", {
        format: "png",
        captureBeyondViewport: true,
      }) as { data: string };
      return Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
    },
  };
  return {
    page,
    async close() {
      try {
        await send("Browser.close");
      } catch { /* already closing */ }
      ws.close();
      try {
        child.kill("SIGKILL");
      } catch { /* already gone */ }
      await child.status;
      await child.stderr.cancel().catch(() => {});
      await Deno.remove(profile, { recursive: true }).catch(() => {});
    },
  };
}

/** Reads Chromium's stderr until it names its DevTools WebSocket. */
async function devtoolsUrl(stderr: ReadableStream<Uint8Array>): Promise<string> {
  const reader = stderr.getReader();
  const dec = new TextDecoder();
  let text = "";
  const deadline = setTimeout(() => reader.cancel(), 60_000);
  try {
    while (true) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`Chromium exited before it listened:\n${text.slice(-2000)}`);
      text += dec.decode(value, { stream: true });
      const m = text.match(/DevTools listening on (ws:\/\/\S+)/);
      if (m) return m[1]!;
    }
  } finally {
    clearTimeout(deadline);
    // Keep draining stderr so Chromium never blocks on a full pipe.
    (async () => {
      try {
        while (!(await reader.read()).done) { /* drain */ }
      } catch { /* cancelled */ }
    })();
  }
}
