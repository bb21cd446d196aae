/**
 * A storage that cannot be used at start-up stops the standalone server with one line on stderr
 * that says what failed: the backend, where (host and port, or the SQLite path), and why
 * (connection refused, unknown host, timed out, permission denied, …), with the password masked,
 * and exit code 2. Every failure is made locally: a closed port, a name under `.invalid` (which
 * never resolves), a TCP server that accepts and never answers, a path no user can create.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { Child } from "../support/server-child.ts";
import { spawnServer } from "../support/server-child.ts";
import { freePort } from "./outage.ts";
import { POSTGRES_URL, REDIS_URL, serviceAvailable } from "./services.ts";

const PASSWORD = "pw-never-shown-42";
const dir = mkdtempSync(join(tmpdir(), "petstore-startup-"));
const children: Child[] = [];
let silent: Server | undefined;
const sockets = new Set<Socket>();

test.after(async () => {
  for (const child of children.splice(0)) await child.stop();
  for (const socket of sockets) socket.destroy();
  if (silent) await new Promise((resolve) => silent?.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

/** A local TCP server that accepts connections and never says a word. */
async function silentPort(): Promise<number> {
  silent ??= createServer((socket) => {
    sockets.add(socket);
    socket.on("error", () => {});
  });
  if (!silent.listening) await new Promise<void>((resolve) => silent?.listen(0, "127.0.0.1", resolve));
  return (silent.address() as { port: number }).port;
}

/** Starts the server on `storage`; it must exit 2 with exactly one stderr line, which is returned. */
async function startupLine(storage: string): Promise<string> {
  const child = spawnServer({ PORT: "0", PETSTORE_API_KEYS: "a-key", PETSTORE_STORAGE: storage });
  children.push(child);
  const code = await child.exited(20_000);
  const stderr = child.stderr();
  assert.is(code, 2, `exit code (stderr: ${stderr})`);
  assert.is(stderr.split("\n").length, 2, `exactly one line: ${JSON.stringify(stderr)}`);
  assert.not.match(stderr, /\n\s+at |\.ts:\d+/, "no stack trace");
  assert.not.ok(stderr.includes(PASSWORD), `the password is masked: ${stderr}`);
  assert.not.match(child.stdout(), /listening/);
  return stderr.trim();
}

for (const [backend, scheme, user] of [
  ["redis", "redis", ""],
  ["postgres", "postgres", "postgres"],
] as const) {
  const url = (host: string, port: number) =>
    `${scheme}://${user}:${PASSWORD}@${host}:${port}${backend === "postgres" ? "/test" : ""}`;

  test(`start-up: ${backend} on a closed port says "${backend}", the host and port, and "connection refused"`, async () => {
    const port = await freePort();
    const line = await startupLine(url("127.0.0.1", port));
    assert.match(line, new RegExp(`^petstore: cannot reach ${backend} at host 127\\.0\\.0\\.1, port ${port} \\(`));
    assert.match(line, /\*\*\*@127\.0\.0\.1/, "the URL is shown with the password masked");
    assert.match(line, /: connection refused \[ECONNREFUSED\]$/);
  });

  test(`start-up: ${backend} on a host that does not resolve says "unknown host"`, async () => {
    const line = await startupLine(url("nohost.invalid", 6390));
    assert.match(line, new RegExp(`^petstore: cannot reach ${backend} at host nohost\\.invalid, port 6390 `));
    assert.match(line, /: unknown host \[(ENOTFOUND|EAI_AGAIN|EAI_NONAME|EAI_FAIL)\]$/);
  });

  test(`start-up: ${backend} on a server that accepts and never answers says "timed out"`, async () => {
    const port = await silentPort();
    const line = await startupLine(url("127.0.0.1", port));
    assert.match(line, new RegExp(`^petstore: cannot reach ${backend} at host 127\\.0\\.0\\.1, port ${port} `));
    assert.match(line, /: timed out after \d+ ms \[/);
  });
}

/** The URL of a service the tests use, with another user, password or database. */
function variant(base: string, change: (url: URL) => void): string {
  const url = new URL(base);
  change(url);
  return url.href;
}

if (serviceAvailable("postgres", "start-up refusals")) {
  test('start-up: a Postgres that refuses the role says it was reached but "refused", with the server\'s reason', async () => {
    const url = variant(POSTGRES_URL, (u) => {
      u.username = "no_such_role_petstore";
      u.password = PASSWORD;
    });
    const line = await startupLine(url);
    assert.match(line, /^petstore: postgres at host [^ ]+, port \d+ \(postgres:\/\/no_such_role_petstore:\*\*\*@/);
    assert.match(line, /\) was reached but refused: .*no_such_role_petstore.* \[28[0-9A-Z]{3}\]$/);
  });

  test('start-up: a Postgres without the database says it was reached but "refused": database … does not exist', async () => {
    const line = await startupLine(variant(POSTGRES_URL, (u) => (u.pathname = "/no_such_db_petstore")));
    assert.match(line, /was reached but refused: database "no_such_db_petstore" does not exist \[3D000\]$/);
  });
}

if (serviceAvailable("redis", "start-up refusals")) {
  test('start-up: a Redis that refuses the login says it was reached but "refused", with its reply', async () => {
    const line = await startupLine(variant(REDIS_URL, (u) => (u.password = PASSWORD)));
    assert.match(line, /^petstore: redis at host [^ ]+, port \d+ \(redis:\/\/:\*\*\*@/);
    assert.match(line, /\) was reached but refused: (ERR|WRONGPASS)\b/);
  });
}

test('start-up: a SQLite path under a regular file says sqlite, the path and "not a directory"', async () => {
  const file = join(dir, "a-file");
  writeFileSync(file, "not a folder");
  const line = await startupLine(`sqlite:${file}/pets.db`);
  assert.is(line, `petstore: cannot open sqlite storage at ${file}/pets.db: not a directory [ENOTDIR]`);
});

test('start-up: a SQLite path in a missing folder says "no such directory"', async () => {
  const line = await startupLine(`sqlite:${join(dir, "missing", "pets.db")}`);
  assert.match(line, /^petstore: cannot open sqlite storage at .*\/missing\/pets\.db: no such directory \[ENOENT\]$/);
});

test('start-up: a SQLite path where the user may not create files says "permission denied"', async () => {
  // Root may write in any ordinary folder: sysfs refuses a new file to everyone (EACCES; EROFS
  // where /sys is mounted read-only). Any other user gets a folder without write permission.
  let path: string;
  if (process.getuid?.() === 0) {
    path = "/sys/petstore-test.db";
  } else {
    const locked = join(dir, "locked");
    mkdirSync(locked, { mode: 0o500 });
    path = join(locked, "pets.db");
  }
  const line = await startupLine(`sqlite:${path}`);
  assert.match(
    line,
    new RegExp(
      `^petstore: cannot open sqlite storage at ${path}: (permission denied \\[EACCES\\]|read-only file system \\[EROFS\\])$`,
    ),
  );
});

test.run();
