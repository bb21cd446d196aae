/**
 * Two standalone pet store servers sharing one Redis, one port each: a pet created through one
 * is listed through the other, and ids stay unique across both (Redis hands them out).
 *
 *   npx tsx examples/shared-redis/run.ts
 *
 * Environment: REDIS_URL (default redis://127.0.0.1:6379), PETSTORE_NAMESPACE (the Redis key
 * prefix both instances use, default "petstore-example"). Each instance is the package's
 * standalone server, started as its own process exactly as an operator would start it:
 *
 *   PORT=8081 PETSTORE_STORAGE=redis://127.0.0.1:6379?namespace=shop PETSTORE_API_KEYS=k npx petstore
 *   PORT=8082 PETSTORE_STORAGE=redis://127.0.0.1:6379?namespace=shop PETSTORE_API_KEYS=k npx petstore
 *
 * (here, from a clone of the repository, `node --import tsx server/cli.ts` stands for `npx petstore`).
 */
import type { ChildProcess } from "node:child_process";
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const NAMESPACE = process.env.PETSTORE_NAMESPACE ?? "petstore-example";
const API_KEY = "shared-example-key";
const SERVER = fileURLToPath(new URL("../../server/cli.ts", import.meta.url));

interface Instance {
  name: string;
  url: string;
  child: ChildProcess;
  exited: Promise<number | null>;
}

/** Starts one server on a free port and resolves with the URL of its start-up line (15 s at most). */
function startInstance(name: string): Promise<Instance> {
  const child = spawn(process.execPath, ["--import", "tsx", SERVER], {
    env: {
      ...process.env,
      PORT: "0", // a free port; the start-up line names it
      PETSTORE_STORAGE: `${REDIS_URL}?namespace=${NAMESPACE}`,
      PETSTORE_API_KEYS: API_KEY,
      LOG_LEVEL: "warn", // keep the demo's output to the point
    },
    stdio: ["ignore", "pipe", "inherit"],
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`instance ${name} did not start within 15 s`));
    }, 15_000);
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk;
      const url = /listening on (http:\/\/\S+)/.exec(out)?.[1];
      if (url !== undefined) {
        clearTimeout(timer);
        child.stdout?.removeAllListeners("data").resume();
        resolve({ name, url, child, exited });
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`instance ${name} exited with ${code} before starting`));
    });
  });
}

const bearer = { authorization: `Bearer ${API_KEY}` };

async function createPet(instance: Instance, name: string) {
  const res = await fetch(`${instance.url}/pets`, {
    method: "POST",
    headers: { ...bearer, "content-type": "application/json" },
    body: JSON.stringify({ name, categoryId: 7 }),
  });
  if (res.status !== 201) throw new Error(`create through ${instance.name}: ${res.status} ${await res.text()}`);
  return (await res.json()) as { id: number; name: string };
}

/** Follows `Link: rel="next"` from the first page until the pet with `id` shows up. */
async function findListed(instance: Instance, id: number) {
  let next: string | undefined = `${instance.url}/pets?limit=100`;
  const origin = new URL(instance.url).origin;
  for (let page = 1; next !== undefined && page <= 10_000; page++) {
    const res: Response = await fetch(next, { headers: bearer });
    const pets = (await res.json()) as { id: number }[];
    const pet = pets.find((p) => p.id === id);
    if (pet !== undefined) return { pet, page };
    const link = /<([^>]+)>; rel="next"/.exec(res.headers.get("link") ?? "")?.[1];
    next = link === undefined ? undefined : origin + link;
  }
  return undefined;
}

const instances: Instance[] = [];
try {
  instances.push(await startInstance("A"));
  instances.push(await startInstance("B"));
  const [a, b] = instances as [Instance, Instance];
  console.log(`instance A: ${a.url}`);
  console.log(`instance B: ${b.url}`);
  console.log(`both use ${REDIS_URL} with namespace "${NAMESPACE}"`);

  const name = `Biscuit-${randomBytes(3).toString("hex")}`;
  const created = await createPet(a, name);
  console.log(`created through A: ${JSON.stringify(created)}`);

  const listed = await findListed(b, created.id);
  if (listed === undefined) throw new Error(`pet ${created.id} is not listed through B`);
  console.log(`listed through B (page ${listed.page}): ${JSON.stringify(listed.pet)}`);

  const fromB = await createPet(b, `${name}-sibling`);
  console.log(`created through B: id ${fromB.id} (ids are unique across instances: ${fromB.id > created.id})`);

  const got = await fetch(`${a.url}/pets/${fromB.id}`, { headers: bearer });
  console.log(`read through A: ${got.status} ${await got.text()}`);
} finally {
  for (const instance of instances) instance.child.kill("SIGTERM");
  const codes = await Promise.all(instances.map((i) => i.exited));
  console.log(`instances stopped with exit codes ${codes.join(", ")}`);
}
