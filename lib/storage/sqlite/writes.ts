/**
 * SQLite storage, its creates: each is one `BEGIN IMMEDIATE` transaction of three calls to the
 * driver (BEGIN; the next id or the key's claim; the value, index entry, key record and COMMIT in
 * one `exec`). All writes share the store's write connection, so this process runs them one after
 * another; other processes wait on the file lock. Steps: docs/STORAGE.md, "SQLite creates".
 */
import type Keyv from "keyv";
import { petTextAround } from "../../json.ts";
import { InvalidRecordError, StorageWarning } from "../failures.ts";
import type { CreateOnceResult, IdempotencyRecord, PetData } from "../port.ts";
import { checkNewId, keyvTextAround, petOfKeyvText, type RecordNames, sequenceExhausted } from "../values.ts";
import {
  type Database,
  exec,
  isConstraint,
  type Prepared,
  queryAll,
  quote,
  type WriteStatements,
} from "./connection.ts";

/** Expired idempotency records are deleted at most this often (by the writes' clock), this many at a time. */
const SWEEP_EVERY_MS = 60_000;
const SWEEP_BATCH = 500;

/** A new pet's two texts, each split around the id its create takes: Keyv's value and the served text. */
interface PetTexts {
  value: [string, string];
  pet: [string, string];
}

/** A create's outcome inside its transaction: the result, or the id of the pet the key's record replays. */
type Outcome = CreateOnceResult | { replay: number };

/** The writes of a store, one after another (one connection: no interleaving). */
export interface WriteQueue {
  /** Runs `work` after every write this process started before it. */
  serialise<T>(work: () => Promise<T>): Promise<T>;
  /** Settles when the last write started so far has ended. */
  idle(): Promise<unknown>;
}

export interface SqliteWriter {
  /** One create, with or without an idempotency key: the new pet, its replay, or the key's conflict. */
  createOnceOrReplay(data: PetData, record?: IdempotencyRecord): Promise<CreateOnceResult>;
}

/** A queue of writes, each run after the one before has settled. */
export function makeWriteQueue(): WriteQueue {
  /** The last write this process started. */
  let writing: Promise<unknown> = Promise.resolve();
  const serialise = <T>(work: () => Promise<T>): Promise<T> => {
    const run = writing.then(work, work);
    writing = run.catch(() => {});
    return run;
  };
  return { serialise, idle: () => writing };
}

/** What a create that wrote pet `id` resolves. */
function newPetResult(id: number, data: PetData): CreateOnceResult {
  return { pet: { id, name: data.name, categoryId: data.categoryId, status: data.status }, replayed: false };
}

/** What the write path of a store is made of. */
export interface WriterParts {
  /** The write connection. */
  db: Database;
  /** The prefix of the store's tables (`<table>_*`). */
  table: string;
  statements: WriteStatements;
  /** The Keyv of its values. */
  values: Keyv<unknown>;
  /** Its writes, one after another. */
  queue: WriteQueue;
  /** A read statement of a pet's value (a replay's pet). */
  petValue: Prepared;
  names: RecordNames;
  /** Told what the store repaired by itself (a sequence behind the stored pets). */
  warn(warning: StorageWarning): void;
}

/** The write path of a store. */
export function makeWriter({ db, table, statements, values, queue, petValue, names, warn }: WriterParts): SqliteWriter {
  const { serialise } = queue;
  /**
   * The end of a create's transaction, in one call to the driver (each call is a hand-off to a
   * thread and back, the bulk of a create's time): `before` (the sequence moved by a claim, or the
   * key's record), the pet's value (Keyv's row and format) and index entry, COMMIT. The values are
   * literals: the id a checked integer, the status one of three words, the texts without NUL
   * (JSON has none; keys that hold one take the compiled path) with their `'` doubled.
   */
  const writePet = (id: number, data: PetData, { value, pet }: PetTexts, before: string) =>
    exec(
      db,
      before +
        `INSERT INTO ${table}_values (key, value) VALUES ('pets:${id}', ${quote(value[0] + id + value[1])});` +
        `INSERT INTO ${table}_index (id, status, pet) VALUES (${id}, ${quote(data.status)}, ${quote(pet[0] + id + pet[1])});` +
        "COMMIT",
    );
  let sweptAt = Number.NEGATIVE_INFINITY;
  /** Deletes a batch of expired idempotency records when the last sweep is a minute old (by the writes' clock). */
  const sweep = async (now: number): Promise<void> => {
    if (now - sweptAt < SWEEP_EVERY_MS) return;
    sweptAt = now;
    await queryAll(
      db,
      `DELETE FROM ${table}_idempotency WHERE (scope, key) IN (SELECT scope, key FROM ${table}_idempotency WHERE expires_at <= ? LIMIT ${SWEEP_BATCH})`,
      [now],
    ).catch(() => {});
  };
  /** The next id, taken inside a transaction. */
  const takeNextId = async (): Promise<number> => {
    const rows = await statements.nextId.all([]);
    if (rows.length === 0) throw sequenceExhausted(names);
    return checkNewId(rows[0]?.id, names);
  };
  /**
   * A create with a key that has no record yet (nearly always): the same three calls as a plain
   * create, the key's record written with the pet as one more literal row. Undefined, nothing
   * written, when the key has a record (even an expired one): `claimAndCreate` then decides.
   */
  const createWithFreshKey = async (data: PetData, text: PetTexts, record: IdempotencyRecord) => {
    await statements.begin.all([]);
    try {
      const id = await takeNextId();
      const keyRow =
        `INSERT INTO ${table}_idempotency (scope, key, fingerprint, pet_id, expires_at) VALUES ` +
        `(${quote(record.scope)}, ${quote(record.key)}, ${quote(record.fingerprint)}, ${id}, ${Math.trunc(record.expiresAt)});`;
      await writePet(id, data, text, keyRow);
      await sweep(record.now);
      return newPetResult(id, data);
    } catch (error) {
      await statements.rollback.all([]).catch(() => {});
      // A key written since (by another process), or a sequence behind: the claim tells which.
      if (isConstraint(error)) return undefined;
      throw error;
    }
  };
  /**
   * A create by compiled statements: without a key, the next id; with one, the key's claim for the
   * next id (an expired record is replaced), or the record that holds the key (nothing is written).
   * Then the pet and COMMIT in one call.
   */
  const claimAndCreate = async (
    data: PetData,
    text: PetTexts,
    record: IdempotencyRecord | undefined,
  ): Promise<Outcome> => {
    await statements.begin.all([]);
    let inTransaction = true;
    try {
      let id: number;
      let sequence = "";
      if (record === undefined) id = await takeNextId();
      else {
        const { scope, key, fingerprint, expiresAt, now } = record;
        const claim = await statements.claim.all([scope, key, fingerprint, expiresAt, now]);
        if (claim.length === 0) {
          const [found] = await statements.find.all([scope, key]);
          inTransaction = false;
          await statements.rollback.all([]); // nothing was written
          if (found === undefined) throw new Error("sqlite storage: the key record vanished in its transaction");
          return found.fingerprint === fingerprint ? { replay: Number(found.pet_id) } : { conflict: "reused" };
        }
        id = checkNewId(claim[0]?.pet_id, names);
        sequence = `UPDATE ${table}_seq SET value = ${id} WHERE id = 1;`; // the claim took seq + 1
      }
      await writePet(id, data, text, sequence);
      inTransaction = false;
      if (record !== undefined) await sweep(record.now);
      return newPetResult(id, data);
    } catch (error) {
      if (inTransaction) await statements.rollback.all([]).catch(() => {});
      throw error;
    }
  };
  /**
   * Moves the sequence past the highest id stored (a database restored from a backup made before
   * its last creates, or written by hand), in a transaction of its own; resolves whether it moved.
   */
  const repairSequence = async (): Promise<boolean> => {
    await statements.begin.all([]);
    try {
      const [row] = await queryAll(
        db,
        `SELECT (SELECT value FROM ${table}_seq WHERE id = 1) AS last,
           max((SELECT coalesce(max(id), 0) FROM ${table}_index),
               (SELECT coalesce(max(CAST(substr(key, 6) AS INTEGER)), 0) FROM ${table}_values WHERE key LIKE 'pets:%')) AS stored`,
      );
      const last = Number(row?.last);
      const stored = Number(row?.stored);
      const behind = Number.isSafeInteger(last) && stored > last;
      if (behind) await queryAll(db, `UPDATE ${table}_seq SET value = ? WHERE id = 1`, [stored]);
      await exec(db, "COMMIT");
      if (behind) {
        warn(
          new StorageWarning(
            "sqlite",
            `the id sequence ${table}_seq stood at ${last}, behind the stored pets: moved to ${stored}`,
          ),
        );
      }
      return behind;
    } catch (error) {
      await statements.rollback.all([]).catch(() => {});
      throw error;
    }
  };
  /** One create, in the queue: as if the key were fresh first, then by its claim when it has a record. */
  const createInQueue = async (data: PetData, text: PetTexts, record?: IdempotencyRecord): Promise<Outcome> => {
    if (record !== undefined && !/\0/.test(record.scope + record.key + record.fingerprint)) {
      const fresh = await createWithFreshKey(data, text, record);
      if (fresh !== undefined) return fresh;
    }
    return claimAndCreate(data, text, record);
  };
  /**
   * One create: serialised `BEGIN IMMEDIATE` transactions of three calls to the driver each. With
   * a key, first as if the key were fresh; when it has a record, by its claim (`claimAndCreate`).
   * An id already taken (the sequence behind the stored pets) moves the sequence and tries once more.
   */
  const createOnceOrReplay = async (data: PetData, record?: IdempotencyRecord): Promise<CreateOnceResult> => {
    // Keyv's text of the pet (its value, in Keyv's format) and its served text, around the id to come.
    const text = { value: keyvTextAround(values, data), pet: petTextAround(data) };
    const outcome = await serialise(async (): Promise<Outcome> => {
      try {
        return await createInQueue(data, text, record);
      } catch (error) {
        if (!isConstraint(error)) throw error;
        if (!(await repairSequence())) {
          throw new InvalidRecordError("sqlite", names.sequence, "a new id is taken, yet the sequence is not behind");
        }
        return createInQueue(data, text, record);
      }
    });
    if (!("replay" in outcome)) return outcome;
    // Pets never change once created: the value read now is the one first answered.
    const [row] = await petValue.all([`pets:${outcome.replay}`]);
    return { pet: petOfKeyvText(outcome.replay, row?.value, values, names), replayed: true };
  };

  return { createOnceOrReplay };
}
