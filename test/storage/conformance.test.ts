/**
 * The storage conformance suite: the same cases for every backend (memory, SQLite, Redis,
 * Postgres), each in a namespace of its own. Cases that need data planted around the store
 * (invalid values, half-made pets, a nearly exhausted sequence) run where raw access exists.
 */
import { suite } from "uvu";
import * as assert from "uvu/assert";
import { createPetStore } from "../../lib/index.ts";
import type { Pet, PetStatus } from "../../lib/schemas.ts";
import { MAX_ID, PET_STATUSES } from "../../lib/schemas.ts";
import { InvalidRecordError, storageFailure } from "../../lib/storage/failures.ts";
import type { PetStorage } from "../../lib/storage/port.ts";
import type { Backend, OpenOptions } from "./backends.ts";
import { backends, keyvJson } from "./backends.ts";
import { RUN } from "./services.ts";

const statusOf = (i: number): PetStatus => PET_STATUSES[i % 3] as PetStatus;

/** Follows pages of `limit` as listPets does, until a page comes back short. */
async function walk(storage: PetStorage, limit: number, status?: PetStatus): Promise<Pet[]> {
  const seen: Pet[] = [];
  let after = 0;
  for (let pages = 0; pages < 10_000; pages++) {
    const page = await storage.list({ status, after, limit });
    seen.push(...page);
    const last = page[page.length - 1];
    if (page.length < limit || last === undefined) return seen;
    after = last.id;
  }
  throw new Error("walk did not end");
}

/** Rejects with what the store answers `code` for, as the guard classifies it (lib/storage/failures.ts). */
async function rejectsWith(promise: unknown, code: string): Promise<unknown> {
  try {
    await promise;
  } catch (thrown) {
    const error = storageFailure(thrown);
    if (code === "internal_error") assert.instance(thrown, InvalidRecordError, "a bad record says so, naming its key");
    assert.is(error.code, code, String(thrown));
    return error;
  }
  assert.unreachable(`expected a rejection with ${code}`);
}

function conformance(backend: Backend): void {
  const s = suite(`storage conformance: ${backend.name}`);
  const namespaces: string[] = [];
  const opened: PetStorage[] = [];
  let count = 0;
  const name = (label: string) => {
    const ns = `${RUN}_${backend.name.slice(0, 2)}${++count}${label}`;
    namespaces.push(ns);
    return ns;
  };
  const open = async (ns: string, options?: OpenOptions) => {
    const storage = await backend.open(ns, options);
    opened.push(storage);
    return storage;
  };
  const fresh = (options?: OpenOptions) => open(name(""), options);

  s.after(async () => {
    await Promise.all(opened.map((storage) => storage.close()));
    await backend.cleanup(namespaces);
  });

  s(`${backend.name}: create assigns ids 1, 2, 3… in order and get returns each pet as created`, async () => {
    const storage = await fresh();
    const a = await storage.create({ name: "Rex", categoryId: 1, status: "available" });
    const b = await storage.create({ name: "Mia 🐈", categoryId: MAX_ID, status: "sold" });
    const c = await storage.create({ name: ":base64:AAAA", categoryId: 3, status: "pending" });
    assert.equal(a, { id: 1, name: "Rex", categoryId: 1, status: "available" });
    assert.equal(b, { id: 2, name: "Mia 🐈", categoryId: MAX_ID, status: "sold" });
    assert.equal(c, { id: 3, name: ":base64:AAAA", categoryId: 3, status: "pending" });
    assert.equal(await storage.get(1), a);
    assert.equal(await storage.get(2), b);
    assert.equal(await storage.get(3), c);
    assert.equal(Object.keys((await storage.get(2)) ?? {}), ["id", "name", "categoryId", "status"]);
  });

  s(`${backend.name}: get of an id never created is undefined`, async () => {
    const storage = await fresh();
    await storage.create({ name: "Rex", categoryId: 1, status: "available" });
    assert.is(await storage.get(2), undefined);
    assert.is(await storage.get(MAX_ID), undefined);
  });

  s(`${backend.name}: list gives ascending ids above "after", at most "limit"; [] past the end`, async () => {
    const storage = await fresh();
    for (let i = 0; i < 10; i++) await storage.create({ name: `p${i}`, categoryId: 1, status: statusOf(i) });
    assert.equal(
      (await storage.list({ after: 0, limit: 4 })).map((p) => p.id),
      [1, 2, 3, 4],
    );
    assert.equal(
      (await storage.list({ after: 7, limit: 4 })).map((p) => p.id),
      [8, 9, 10],
    );
    assert.equal(await storage.list({ after: 10, limit: 4 }), []);
    assert.equal(await storage.list({ after: MAX_ID, limit: 100 }), []);
  });

  s(`${backend.name}: list with a status gives only pets of that status, in id order`, async () => {
    const storage = await fresh();
    for (let i = 0; i < 12; i++) await storage.create({ name: `p${i}`, categoryId: 1, status: statusOf(i) });
    for (const status of PET_STATUSES) {
      const pets = await storage.list({ status, after: 0, limit: 100 });
      assert.is(pets.length, 4);
      assert.ok(pets.every((p) => p.status === status));
      assert.equal(
        pets.map((p) => p.id),
        [...pets.map((p) => p.id)].sort((x, y) => x - y),
      );
    }
    assert.equal(
      (await storage.list({ status: "pending", after: 2, limit: 2 })).map((p) => p.id),
      [5, 8],
    );
  });

  s(
    `${backend.name}: a pagination walk visits every pet exactly once, in order, with and without a status filter`,
    async () => {
      const storage = await fresh();
      const total = 150;
      for (let i = 0; i < total; i++)
        await storage.create({ name: `p${i}`, categoryId: 1 + (i % 5), status: statusOf(i) });
      const all = await walk(storage, 7);
      assert.equal(
        all.map((p) => p.id),
        Array.from({ length: total }, (_, i) => i + 1),
      );
      let sum = 0;
      for (const status of PET_STATUSES) {
        const pets = await walk(storage, 9, status);
        assert.ok(pets.every((p) => p.status === status));
        assert.equal(
          pets.map((p) => p.id),
          all.filter((p) => p.status === status).map((p) => p.id),
        );
        sum += pets.length;
      }
      assert.is(sum, total);
    },
  );

  s(`${backend.name}: 200 concurrent creates get 200 distinct ids, each listed exactly once`, async () => {
    const storage = await fresh();
    const created = await Promise.all(
      Array.from({ length: 200 }, (_, i) => storage.create({ name: `c${i}`, categoryId: 1, status: statusOf(i) })),
    );
    const ids = created.map((p) => p.id);
    assert.is(new Set(ids).size, 200);
    assert.ok(ids.every((id) => Number.isSafeInteger(id) && id >= 1));
    const walked = await walk(storage, 13);
    assert.equal(
      walked.map((p) => p.id),
      [...ids].sort((x, y) => x - y),
    );
    const byId = new Map(created.map((p) => [p.id, p]));
    assert.ok(walked.every((p) => JSON.stringify(p) === JSON.stringify(byId.get(p.id))));
  });

  s(`${backend.name}: concurrent gets and lists during concurrent creates never see a half-made pet`, async () => {
    const storage = await fresh();
    const reads: unknown[] = [];
    const creates: Promise<Pet>[] = [];
    for (let i = 0; i < 60; i++) {
      creates.push(storage.create({ name: `r${i}`, categoryId: 2, status: statusOf(i) }));
      reads.push(
        storage.get(i + 1),
        storage.list({ after: 0, limit: 100 }),
        storage.list({ status: statusOf(i), after: 0, limit: 100 }),
      );
    }
    // Every read resolves (no internal_error from a pet caught between its value and its index).
    const results = await Promise.all(reads);
    for (const r of results) {
      const pets = Array.isArray(r) ? r : r === undefined ? [] : [r];
      for (const p of pets) assert.ok(p.name.startsWith("r"));
    }
    assert.is((await Promise.all(creates)).length, 60);
    assert.is((await walk(storage, 100)).length, 60);
  });

  s(`${backend.name}: two namespaces on one backend are isolated (own ids from 1, own lists, own gets)`, async () => {
    const one = await fresh();
    const two = await fresh();
    await one.create({ name: "in-one", categoryId: 1, status: "available" });
    await one.create({ name: "in-one-too", categoryId: 1, status: "available" });
    const t = await two.create({ name: "in-two", categoryId: 1, status: "available" });
    assert.is(t.id, 1);
    assert.equal(
      (await two.list({ after: 0, limit: 10 })).map((p) => p.name),
      ["in-two"],
    );
    assert.is((await one.get(1))?.name, "in-one");
    assert.is(await two.get(2), undefined);
  });

  s(
    `${backend.name}: close is idempotent and closing one store leaves another on the same backend working`,
    async () => {
      const ns = name("");
      const first = await open(ns);
      const second = await open(ns);
      await first.create({ name: "a", categoryId: 1, status: "available" });
      await first.close();
      await first.close();
      const b = await second.create({ name: "b", categoryId: 1, status: "sold" });
      assert.equal(await second.get(b.id), b);
      await second.ping();
      if (backend.persistent) assert.is((await second.list({ after: 0, limit: 10 })).length, 2);
    },
  );

  s(
    `${backend.name}: names JSON, Keyv or SQL escape (quotes, backslash, control character, leading colon, emoji) come back from list and get as created, and a page answers the contract's JSON text`,
    async () => {
      const storage = await fresh();
      const names = [
        'say "hi"',
        "O'Brien's ''pet''",
        "'); DROP TABLE x; --",
        "back\\slash",
        "tab\there",
        ":colon",
        "::two",
        ":base64:AAAA",
        "Mia 🐈",
        "é",
        "plain",
      ];
      const created: Pet[] = [];
      for (const n of names) created.push(await storage.create({ name: n, categoryId: 3, status: "pending" }));
      assert.equal(await storage.list({ after: 0, limit: 100 }), created);
      assert.equal(await storage.list({ status: "pending", after: 0, limit: 100 }), created);
      for (const pet of created) assert.equal(await storage.get(pet.id), pet);
      const store = createPetStore({ storage, auth: ["k"] });
      const page = await store.handle({ method: "GET", path: "/v1/pets", headers: { authorization: "Bearer k" } });
      assert.is(page.status, 200);
      assert.is(page.body, JSON.stringify(created));
      assert.is(page.headers["content-length"], String(Buffer.byteLength(page.body)));
    },
  );

  s(`${backend.name}: ping resolves while the backend answers`, async () => {
    const storage = await fresh();
    await storage.ping();
    assert.ok(true, "ping resolved");
  });

  if (!backend.persistent) {
    s.run();
    return;
  }

  s(`${backend.name}: after close every call rejects (never stale or empty answers)`, async () => {
    const storage = await fresh();
    await storage.create({ name: "a", categoryId: 1, status: "available" });
    await storage.close();
    for (const call of [
      (): unknown => storage.get(1),
      () => storage.list({ after: 0, limit: 10 }),
      () => storage.create({ name: "b", categoryId: 1, status: "available" }),
      () => storage.ping(),
    ]) {
      let rejected = false;
      await Promise.resolve()
        .then(call)
        .catch(() => {
          rejected = true;
        });
      assert.ok(rejected, "a call on a closed store must reject");
    }
  });

  s(`${backend.name}: pets, ids and the sequence survive close and reopen`, async () => {
    const ns = name("");
    const first = await open(ns);
    const a = await first.create({ name: "kept", categoryId: 4, status: "pending" });
    await first.close();
    const again = await open(ns);
    assert.equal(await again.get(a.id), a);
    assert.equal(await again.list({ status: "pending", after: 0, limit: 10 }), [a]);
    assert.is((await again.create({ name: "next", categoryId: 4, status: "pending" })).id, a.id + 1);
  });

  const raw = backend.raw;
  if (raw === undefined) {
    s.run();
    return;
  }

  s(`${backend.name}: a stored value that is not valid JSON is internal_error for get and list`, async () => {
    const ns = name("");
    const storage = await open(ns);
    await storage.create({ name: "ok", categoryId: 1, status: "available" });
    await storage.create({ name: "to-break", categoryId: 1, status: "available" });
    await raw.writeValue(ns, 2, "{not json");
    assert.is((await storage.get(1))?.name, "ok");
    await rejectsWith(storage.get(2), "internal_error");
    await rejectsWith(storage.list({ after: 0, limit: 10 }), "internal_error");
    await rejectsWith(storage.list({ status: "available", after: 1, limit: 10 }), "internal_error");
  });

  s(
    `${backend.name}: a stored value that is not a Pet (wrong shape, unsafe id, other id) is internal_error`,
    async () => {
      const ns = name("");
      const storage = await open(ns);
      for (let i = 0; i < 5; i++) await storage.create({ name: `p${i}`, categoryId: 1, status: "sold" });
      await raw.writeValue(ns, 1, keyvJson({ id: 1, name: "no category", status: "sold" }));
      await raw.writeValue(ns, 2, keyvJson({ id: 2, name: "x", categoryId: 2 ** 60, status: "sold" }));
      await raw.writeValue(ns, 3, keyvJson({ id: 4, name: "says it is 4", categoryId: 1, status: "sold" }));
      await raw.writeValue(ns, 4, keyvJson({ id: 4, name: "x", categoryId: 1, status: "lost" }));
      await raw.writeValue(ns, 5, keyvJson("just a string"));
      for (const id of [1, 2, 3, 4, 5]) {
        const error = await rejectsWith(storage.get(id), "internal_error");
        assert.is((error as Error).message, "An unexpected error occurred.", "the details stay out of the message");
        await rejectsWith(storage.list({ after: id - 1, limit: 1 }), "internal_error");
      }
    },
  );

  s(
    `${backend.name}: through handle(), an invalid stored value answers 500 internal_error, is left out of its page and is reported to onError once per key`,
    async () => {
      const ns = name("");
      const storage = await open(ns);
      await storage.create({ name: "p", categoryId: 1, status: "sold" });
      await raw.writeValue(ns, 1, keyvJson({ id: 1, name: 42 }));
      const reported: unknown[] = [];
      const store = createPetStore({ storage, auth: ["k"], onError: (e) => reported.push(e) });
      const headers = { authorization: "Bearer k" };
      const one = await store.handle({ method: "GET", path: "/v1/pets/1", headers });
      const many = await store.handle({ method: "GET", path: "/v1/pets", headers });
      assert.is(one.status, 500);
      assert.is(many.status, 200, "its page is served without it");
      assert.equal(JSON.parse(many.body), []);
      assert.is(JSON.parse(one.body).code, "internal_error");
      assert.not.match(one.body, /name|42|storage/);
      assert.is(reported.length, 1, "the page meets the same record: reported once a minute");
      const key = backend.name.startsWith("redis") ? `${ns}}?::1` : "pets:1";
      assert.match(String((reported[0] as Error).cause), new RegExp(`${key} is invalid: not a valid Pet`));
    },
  );

  s(
    `${backend.name}: a value Keyv reads in another form (other key order, spaces, an expiry to come) is served as the Pet it holds, in the contract's key order`,
    async () => {
      const ns = name("");
      const storage = await open(ns);
      for (let i = 0; i < 3; i++) await storage.create({ name: `p${i}`, categoryId: 1, status: "sold" });
      const later = Date.now() + 3_600_000;
      await raw.writeValue(
        ns,
        2,
        `{ "expires": ${later}, "value": { "status": "sold", "categoryId": 1, "name": "p1", "id": 2 } }`,
      );
      await raw.writeValue(ns, 3, JSON.stringify({ value: { id: 3, name: "::p2", categoryId: 1, status: "sold" } }));
      const expected = [
        { id: 1, name: "p0", categoryId: 1, status: "sold" },
        { id: 2, name: "p1", categoryId: 1, status: "sold" },
        { id: 3, name: ":p2", categoryId: 1, status: "sold" },
      ];
      assert.equal(await storage.list({ after: 0, limit: 10 }), expected);
      assert.equal(await storage.get(2), expected[1]);
      const store = createPetStore({ storage, auth: ["k"] });
      const page = await store.handle({ method: "GET", path: "/v1/pets", headers: { authorization: "Bearer k" } });
      assert.is(page.body, JSON.stringify(expected));
    },
  );

  s(`${backend.name}: an indexed value whose Keyv expiry has passed is internal_error, as a missing one`, async () => {
    const ns = name("");
    const storage = await open(ns);
    await storage.create({ name: "gone", categoryId: 1, status: "available" });
    await raw.writeValue(
      ns,
      1,
      JSON.stringify({ value: { id: 1, name: "gone", categoryId: 1, status: "available" }, expires: 1 }),
    );
    await rejectsWith(storage.list({ after: 0, limit: 10 }), "internal_error");
    await rejectsWith(storage.get(1), "internal_error");
  });

  s(
    `${backend.name}: a create writes its value in Keyv's table or key, in Keyv's format: a Keyv of its own reads it`,
    async () => {
      const ns = name("");
      const storage = await open(ns);
      const pet = await storage.create({ name: ':colon "quoted" 🐈', categoryId: MAX_ID, status: "sold" });
      const keyv = await raw.keyv(ns);
      try {
        assert.equal(await keyv.get(String(pet.id)), pet);
      } finally {
        await keyv.disconnect();
      }
    },
  );

  s(`${backend.name}: a value without its index entry (a create cut short) is invisible to get and list`, async () => {
    const ns = name("");
    const storage = await open(ns);
    await storage.create({ name: "whole", categoryId: 1, status: "available" });
    await raw.writeValue(ns, 2, keyvJson({ id: 2, name: "half", categoryId: 1, status: "available" }));
    assert.is(await storage.get(2), undefined);
    assert.equal(
      (await storage.list({ after: 0, limit: 10 })).map((p) => p.name),
      ["whole"],
    );
    assert.equal(
      (await storage.list({ status: "available", after: 0, limit: 10 })).map((p) => p.name),
      ["whole"],
    );
  });

  s(`${backend.name}: an indexed id whose value is missing is internal_error, never silently skipped`, async () => {
    const ns = name("");
    const storage = await open(ns);
    await storage.create({ name: "whole", categoryId: 1, status: "pending" });
    await raw.addToIndex(ns, 7, "pending");
    await rejectsWith(storage.get(7), "internal_error");
    await rejectsWith(storage.list({ status: "pending", after: 0, limit: 10 }), "internal_error");
  });

  s(
    `${backend.name}: with onInvalid, a page leaves out each record that cannot be decoded, tells it with its key, and still holds limit pets`,
    async () => {
      const ns = name("");
      const storage = await open(ns);
      for (let i = 1; i <= 12; i++) await storage.create({ name: `p${i}`, categoryId: 1, status: "sold" });
      await raw.writeValue(ns, 2, "not json");
      await raw.writeValue(ns, 3, keyvJson({ id: 3, name: "", categoryId: 1, status: "sold" }));
      await raw.addToIndex(ns, 13, "sold"); // in the index, no value
      const told: InvalidRecordError[] = [];
      const onInvalid = (error: InvalidRecordError) => told.push(error);
      for (const status of [undefined, "sold" as const]) {
        told.length = 0;
        const first = await storage.list({ status, after: 0, limit: 4, onInvalid });
        assert.equal(
          first.map((p) => p.id),
          [1, 4, 5, 6],
          "reads on past the bad ones",
        );
        const last = await storage.list({ status, after: 10, limit: 4, onInvalid });
        assert.equal(
          last.map((p) => p.id),
          [11, 12],
        );
        assert.equal(
          told.map((e) => e.key.replace(/^.*::/, "pets:")),
          ["pets:2", "pets:3", "pets:13"],
        );
        assert.ok(
          told.every((e) => e instanceof InvalidRecordError && e.backend === backend.name.replace("-cluster", "")),
        );
      }
      await rejectsWith(storage.list({ after: 0, limit: 4 }), "internal_error");
    },
  );

  s(
    `${backend.name}: ids stay safe integers: the sequence hands out 2^53-1, then refuses with internal_error`,
    async () => {
      const ns = name("");
      const storage = await open(ns);
      await storage.create({ name: "first", categoryId: 1, status: "available" });
      await raw.setSequence(ns, MAX_ID - 1);
      const last = await storage.create({ name: "last", categoryId: 1, status: "available" });
      assert.is(last.id, MAX_ID);
      assert.equal(await storage.get(MAX_ID), last);
      await rejectsWith(storage.create({ name: "too many", categoryId: 1, status: "available" }), "internal_error");
      assert.equal(
        (await walk(storage, 1)).map((p) => p.name),
        ["first", "last"],
      );
    },
  );

  s(
    `${backend.name}: a create with an idempotency key past 2^53-1 refuses with internal_error and keeps no key`,
    async () => {
      const ns = name("");
      const storage = await open(ns);
      if (storage.createOnce === undefined) return;
      const record = (key: string) => ({
        scope: "s",
        key,
        fingerprint: "f",
        expiresAt: Date.now() + 60_000,
        now: Date.now(),
      });
      await raw.setSequence(ns, MAX_ID - 1);
      const last = await storage.createOnce({ name: "last", categoryId: 1, status: "sold" }, record("k1"));
      assert.equal(last, { pet: { id: MAX_ID, name: "last", categoryId: 1, status: "sold" }, replayed: false });
      await rejectsWith(
        storage.createOnce({ name: "too many", categoryId: 1, status: "sold" }, record("k2")),
        "internal_error",
      );
      assert.is(await storage.findOnce?.(record("k2")), undefined);
      assert.equal(await storage.get(MAX_ID), { id: MAX_ID, name: "last", categoryId: 1, status: "sold" });
    },
  );

  s.run();
}

for (const backend of backends("storage conformance")) conformance(backend);
