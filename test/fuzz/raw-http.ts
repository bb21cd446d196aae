/**
 * A raw HTTP/1.1 client on a TCP socket: it sends exactly the bytes it is given (lying
 * Content-Length, junk headers, slow drips) and reads back one answer, so that tests see what
 * the server does with requests no well-behaved client library would send.
 */
import { connect, type Socket } from "node:net";

export interface RawAnswer {
  status: number;
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  body: Buffer;
}

export type RawOutcome =
  | { kind: "answer"; answer: RawAnswer; closedAfter: boolean }
  /** The connection ended (or was reset) before a complete answer arrived. */
  | { kind: "closed"; partial: string; error?: string }
  | { kind: "timeout"; partial: string };

export interface RawOptions {
  /** The request is HEAD: the answer has no body whatever its Content-Length says. */
  head?: boolean;
  /** Gives up (outcome "timeout") after this long (default 5000 ms). */
  timeoutMs?: number;
  /** Half-closes the connection once everything is written. */
  endAfterWrite?: boolean;
  /** Waits for the server to close the connection after the answer (reported as closedAfter). */
  waitForClose?: boolean;
  /** Called once part `index` of `parts` has been handed to the socket. */
  onWrite?: (index: number) => void;
  /** Called when an interim answer (e.g. `100 Continue`) arrives. */
  onInterim?: (status: number) => void;
}

/** What `rawExchange` writes: bytes, a pause in ms, or a gate (a function whose promise it awaits). */
export type Part = string | Uint8Array | number | (() => Promise<unknown>);

/** Parses one answer at the start of `data` (after any 1xx interim answers). */
function parse(data: Buffer, head: boolean, ended: boolean): { answer: RawAnswer; rest: Buffer } | undefined {
  let start = 0;
  for (;;) {
    const end = data.indexOf("\r\n\r\n", start);
    if (end === -1) return undefined;
    const lines = data.subarray(start, end).toString("latin1").split("\r\n");
    const m = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? "");
    if (m === null) throw new Error(`not an HTTP answer: ${JSON.stringify(lines[0])}`);
    const status = Number(m[1]);
    const headers: Record<string, string> = {};
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(":");
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
    }
    const bodyStart = end + 4;
    if (status >= 100 && status < 200) {
      start = bodyStart;
      continue;
    }
    if (head || status === 204 || status === 304) {
      return { answer: { status, headers, body: Buffer.alloc(0) }, rest: data.subarray(bodyStart) };
    }
    const length = headers["content-length"];
    if (length !== undefined) {
      const n = Number(length);
      if (data.length - bodyStart < n) return undefined;
      return {
        answer: { status, headers, body: data.subarray(bodyStart, bodyStart + n) },
        rest: data.subarray(bodyStart + n),
      };
    }
    if (headers["transfer-encoding"]?.toLowerCase() === "chunked") {
      const chunks: Buffer[] = [];
      let at = bodyStart;
      for (;;) {
        const eol = data.indexOf("\r\n", at);
        if (eol === -1) return undefined;
        const size = Number.parseInt(data.subarray(at, eol).toString("latin1"), 16);
        if (size === 0) {
          const trailerEnd = data.indexOf("\r\n", eol + 2);
          if (trailerEnd === -1) return undefined;
          return { answer: { status, headers, body: Buffer.concat(chunks) }, rest: data.subarray(trailerEnd + 2) };
        }
        if (data.length < eol + 2 + size + 2) return undefined;
        chunks.push(data.subarray(eol + 2, eol + 2 + size));
        at = eol + 2 + size + 2;
      }
    }
    // No length: the body runs to the end of the connection.
    if (!ended) return undefined;
    return { answer: { status, headers, body: data.subarray(bodyStart) }, rest: Buffer.alloc(0) };
  }
}

/**
 * Opens a connection, writes `parts` (each a write, a pause or a gate), and resolves with
 * the first answer, or with how the connection ended without one. Never rejects, never hangs.
 */
export function rawExchange(port: number, parts: Part[], options: RawOptions = {}) {
  const { head = false, timeoutMs = 5000, endAfterWrite = false, waitForClose = false, onWrite, onInterim } = options;
  return new Promise<RawOutcome>((resolve) => {
    const socket: Socket = connect({ port, host: "127.0.0.1" });
    let data = Buffer.alloc(0);
    let ended = false;
    let settled = false;
    let found: RawAnswer | undefined;
    const finish = (outcome: RawOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    };
    const timer = setTimeout(() => {
      if (found) finish({ kind: "answer", answer: found, closedAfter: false });
      else finish({ kind: "timeout", partial: data.toString("latin1").slice(0, 200) });
    }, timeoutMs);
    const tryParse = () => {
      if (found) return;
      try {
        const parsed = parse(data, head, ended);
        if (parsed) {
          found = parsed.answer;
          if (!waitForClose || ended) finish({ kind: "answer", answer: found, closedAfter: ended });
        }
      } catch (error) {
        finish({ kind: "closed", partial: data.toString("latin1").slice(0, 200), error: String(error) });
      }
    };
    let interims = 0;
    socket.on("data", (chunk: Buffer) => {
      data = Buffer.concat([data, chunk]);
      // Report each complete interim answer once.
      const text = data.toString("latin1");
      const seen = [...text.matchAll(/^HTTP\/1\.[01] (1\d\d)[^\r]*\r\n(?:[^\r]+\r\n)*\r\n/gm)];
      for (const m of seen.slice(interims)) onInterim?.(Number(m[1]));
      interims = seen.length;
      tryParse();
    });
    const onGone = (error?: Error) => {
      ended = true;
      tryParse();
      if (found) finish({ kind: "answer", answer: found, closedAfter: true });
      else
        finish({
          kind: "closed",
          partial: data.toString("latin1").slice(0, 200),
          ...(error ? { error: String(error) } : {}),
        });
    };
    socket.on("end", () => onGone());
    socket.on("close", () => onGone());
    socket.on("error", (error) => onGone(error));
    socket.on("connect", async () => {
      for (const [index, part] of parts.entries()) {
        if (settled || socket.destroyed) return;
        if (typeof part === "function") await part();
        else if (typeof part === "number") await new Promise((r) => setTimeout(r, part));
        else if (!socket.write(part)) await new Promise((r) => socket.once("drain", r));
        onWrite?.(index);
      }
      if (endAfterWrite && !socket.destroyed) socket.end();
    });
  });
}

/** One kept-alive connection on which requests are sent one after the other. */
export interface Session {
  /** Writes `bytes` and resolves with the next answer, or how the connection ended without one. */
  exchange(bytes: string | Uint8Array, options?: { head?: boolean; timeoutMs?: number }): Promise<RawOutcome>;
  /** True once the server has closed its side. */
  readonly ended: boolean;
  close(): void;
}

/** Opens a kept-alive connection. */
export function openSession(port: number): Promise<Session> {
  return new Promise((resolve, reject) => {
    const socket = connect({ port, host: "127.0.0.1" });
    let data = Buffer.alloc(0);
    let ended = false;
    let waiter: (() => void) | undefined;
    socket.on("data", (chunk: Buffer) => {
      data = Buffer.concat([data, chunk]);
      waiter?.();
    });
    const gone = () => {
      ended = true;
      waiter?.();
    };
    socket.on("end", gone);
    socket.on("close", gone);
    socket.on("error", gone);
    socket.once("connect", () => {
      socket.off("error", reject);
      resolve({
        get ended() {
          return ended;
        },
        close: () => socket.destroy(),
        exchange(bytes, { head = false, timeoutMs = 5000 } = {}) {
          return new Promise<RawOutcome>((done) => {
            const timer = setTimeout(() => {
              waiter = undefined;
              done({ kind: "timeout", partial: data.toString("latin1").slice(0, 200) });
            }, timeoutMs);
            const check = () => {
              let parsed: ReturnType<typeof parse>;
              try {
                parsed = parse(data, head, ended);
              } catch (error) {
                parsed = undefined;
                ended = true;
                data = Buffer.from(String(error));
              }
              if (parsed) {
                data = Buffer.from(parsed.rest);
                clearTimeout(timer);
                waiter = undefined;
                done({ kind: "answer", answer: parsed.answer, closedAfter: ended });
              } else if (ended) {
                clearTimeout(timer);
                waiter = undefined;
                done({ kind: "closed", partial: data.toString("latin1").slice(0, 200) });
              }
            };
            waiter = check;
            if (!ended) socket.write(bytes);
            check();
          });
        },
      });
    });
    socket.once("error", reject);
  });
}

/** The answer of an exchange; throws when the connection ended without one. */
export function answerOf(outcome: RawOutcome): RawAnswer {
  if (outcome.kind !== "answer") throw new Error(`expected an answer, got ${JSON.stringify(outcome)}`);
  return outcome.answer;
}

/** A request head to a server on this machine: `host: 127.0.0.1`, then `extra`. */
export function localHead(method: string, target: string, extra: [string, string][] = []): string {
  return requestHead(method, target, [["host", "127.0.0.1"], ...extra]);
}

/** A request head: the request line, the headers (repeated names as several lines), the blank line. */
export function requestHead(method: string, target: string, headers: [string, string][]): string {
  return `${method} ${target} HTTP/1.1\r\n${headers.map(([n, v]) => `${n}: ${v}\r\n`).join("")}\r\n`;
}
