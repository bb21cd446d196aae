/**
 * Postgres storage, its creates: each is one prepared statement, so one round trip and one
 * transaction (the next id, the value in Keyv's format, the index entry). An idempotent one also
 * takes an advisory lock on the key and writes the key's record with the pet, or nothing when the
 * lock is taken or an unexpired record exists. Steps: docs/STORAGE.md, "Postgres creates".
 */
import type Keyv from "keyv";
import type { Pet } from "../../schemas.ts";
import { blamed, InvalidRecordError, StorageWarning } from "../failures.ts";
import type { CreateOnceResult, IdempotencyRecord, PetData } from "../port.ts";
import { checkNewId, keyvTextAround, petOfKeyvText, type RecordNames, sequenceExhausted } from "../values.ts";
import { nameStatement, type PgNamedQuery, type PgPool, postgresBlamesValue, UNIQUE_VIOLATION } from "./connection.ts";

const SEQUENCE_EXHAUSTED = "2200H";
/** Expired idempotency records are deleted at most this often (by the writes' clock), this many at a time. */
const SWEEP_EVERY_MS = 60_000;
const SWEEP_BATCH = 500;

export interface PostgresWriter {
  /** A create without a key: the new pet. */
  create(data: PetData): Promise<Pet>;
  /** A create with a key: the new pet, the replay of the key's record, or the key's conflict. */
  createOnce(data: PetData, record: IdempotencyRecord): Promise<CreateOnceResult>;
  /** What an unexpired record of the key gives: its pet (a replay) or `reused`; undefined without one. */
  findReplay(record: IdempotencyRecord): Promise<CreateOnceResult | undefined>;
}

/**
 * A create in one statement, so one round trip and one transaction: the next id, the value
 * (Keyv's row and format) and the index entry. The idempotent create adds the key's record,
 * written only when the key's advisory lock is free and no unexpired record exists.
 * $1/$2 the value's text around the id, $3 status; then $4 scope, $5 key, $6 fingerprint, $7 now, $8 expires at.
 */
function buildCreateStatement(qualified: string, kind: "create" | "createOnce") {
  const keyTable = `${qualified}_idempotency`;
  const steps =
    kind === "createOnce"
      ? `lock AS (SELECT pg_try_advisory_xact_lock(hashtextextended('petstore-key ' || $4::text || ' ' || $5::text, 0)) AS got),
  pet AS (SELECT nextval('${qualified}_id_seq') AS id FROM lock
    WHERE got AND NOT EXISTS (SELECT 1 FROM ${keyTable} WHERE scope = $4 AND key = $5 AND expires_at > $7)),
  made AS (INSERT INTO ${keyTable} (scope, key, fingerprint, pet_id, expires_at) SELECT $4, $5, $6, id, $8 FROM pet
    ON CONFLICT (scope, key) DO UPDATE SET fingerprint = excluded.fingerprint, pet_id = excluded.pet_id, expires_at = excluded.expires_at
    WHERE ${keyTable}.expires_at <= $7
    RETURNING pet_id AS id)`
      : `made AS (SELECT nextval('${qualified}_id_seq') AS id)`;
  return nameStatement(`WITH ${steps},
  val AS (INSERT INTO ${qualified}_values (key, value) SELECT 'pets:' || id, $1::text || id || $2::text FROM made),
  idx AS (INSERT INTO ${qualified}_index (id, status) SELECT id, $3 FROM made)
  SELECT (SELECT id FROM made) AS created`);
}

/** What the write path of a store is made of. */
export interface WriterParts {
  pool: PgPool;
  /** `<schema>.<table>`: the prefix of the store's tables and sequence. */
  qualified: string;
  /** The Keyv of its values. */
  values: Keyv<unknown>;
  /** Throws when the store is closed. */
  ensureOpen(): void;
  names: RecordNames;
  /** Told what the store repaired by itself (a sequence behind the stored pets). */
  warn(warning: StorageWarning): void;
}

/** The write path of a store; each call first runs `ensureOpen`. */
export function makeWriter({ pool, qualified, values, ensureOpen, names, warn }: WriterParts): PostgresWriter {
  const keyTable = `${qualified}_idempotency`;
  const sequence = `${qualified}_id_seq`;
  const createStatement = buildCreateStatement(qualified, "create");
  const createOnceStatement = buildCreateStatement(qualified, "createOnce");
  /**
   * Moves the sequence past the highest id stored (a database restored from a backup made before
   * its last creates), in a transaction of its own; resolves whether it moved. ALTER SEQUENCE
   * locks it against `nextval` until the transaction ends, so no create takes an id meanwhile.
   */
  const repairSequence = async (): Promise<boolean> => {
    const client = await pool.connect();
    try {
      await client.query("BEGIN");
      await client.query(`ALTER SEQUENCE ${sequence} MAXVALUE 9007199254740991`);
      const [row] = (
        await client.query(
          `SELECT q.last_value, q.is_called, greatest(
             (SELECT coalesce(max(id), 0) FROM ${qualified}_index),
             (SELECT coalesce(max(substring(key FROM 6)::bigint), 0) FROM ${qualified}_values WHERE key ~ '^pets:[0-9]{1,16}$')
           ) AS stored FROM ${sequence} q`,
        )
      ).rows;
      const taken = Number(row?.last_value) - (row?.is_called ? 0 : 1);
      const stored = Number(row?.stored);
      const behind = stored > taken;
      if (behind) await client.query("SELECT setval($1, $2, true)", [sequence, stored]);
      await client.query("COMMIT");
      client.release();
      if (behind) {
        warn(
          new StorageWarning(
            "postgres",
            `the id sequence ${sequence} stood at ${taken}, behind the stored pets: moved to ${stored}`,
          ),
        );
      }
      return behind;
    } catch (error) {
      await client.query("ROLLBACK").catch(() => {});
      client.release(error instanceof Error ? error : new Error(String(error)));
      throw error;
    }
  };
  /** Runs a create statement once: the id it created, or undefined when it wrote nothing. */
  const runOnce = async (statement: PgNamedQuery): Promise<number | undefined> => {
    let row: Record<string, unknown> | undefined;
    try {
      row = (await pool.query(statement)).rows[0];
    } catch (error) {
      if ((error as { code?: unknown }).code === SEQUENCE_EXHAUSTED) throw sequenceExhausted(names);
      throw error;
    }
    return row?.created === null || row?.created === undefined ? undefined : checkNewId(Number(row.created), names);
  };
  /**
   * Runs a create statement: an id already taken (the sequence behind the stored pets) moves the
   * sequence and runs it once more.
   */
  const runCreate = async (statement: PgNamedQuery): Promise<number | undefined> => {
    try {
      return await runOnce(statement);
    } catch (error) {
      if ((error as { code?: unknown }).code !== UNIQUE_VIOLATION) {
        throw blamed(error, "postgres", names.sequence, postgresBlamesValue);
      }
      if (!(await repairSequence())) {
        throw new InvalidRecordError("postgres", names.sequence, "a new id is taken, yet the sequence is not behind");
      }
      return runOnce(statement);
    }
  };
  let sweptAt = Number.NEGATIVE_INFINITY;
  /** Deletes a batch of expired idempotency records when the last sweep is a minute old (by the writes' clock). */
  const sweep = async (now: number): Promise<void> => {
    if (now - sweptAt < SWEEP_EVERY_MS) return;
    sweptAt = now;
    await pool
      .query(
        `DELETE FROM ${keyTable} WHERE ctid = ANY (ARRAY(SELECT ctid FROM ${keyTable} WHERE expires_at <= $1 LIMIT ${SWEEP_BATCH}))`,
        [now],
      )
      .catch(() => {});
  };
  const findReplay = async ({
    scope,
    key,
    fingerprint,
    now,
  }: IdempotencyRecord): Promise<CreateOnceResult | undefined> => {
    const found = (
      await pool.query(
        `SELECT fingerprint, pet_id FROM ${keyTable} WHERE scope = $1 AND key = $2 AND expires_at > $3`,
        [scope, key, now],
      )
    ).rows[0];
    if (found === undefined) return undefined;
    if (found.fingerprint !== fingerprint) return { conflict: "reused" };
    const id = Number(found.pet_id);
    const raw = (await pool.query(`SELECT value FROM ${qualified}_values WHERE key = $1`, [`pets:${id}`])).rows[0];
    return { pet: petOfKeyvText(id, raw?.value, values, names), replayed: true };
  };

  return {
    async createOnce(data: PetData, record: IdempotencyRecord): Promise<CreateOnceResult> {
      ensureOpen();
      const { scope, key, fingerprint, now, expiresAt } = record;
      const [head, tail] = keyvTextAround(values, data);
      const id = await runCreate(
        createOnceStatement([head, tail, data.status, scope, key, fingerprint, now, expiresAt]),
      );
      await sweep(now);
      if (id !== undefined) {
        return { pet: { id, name: data.name, categoryId: data.categoryId, status: data.status }, replayed: false };
      }
      // Nothing written: the key has a record, or another call holds its lock (is writing it, or replaying).
      // No record: another call is writing it now (or just rolled back); the client tries again.
      return (await findReplay(record)) ?? { conflict: "in_use" };
    },
    async create(data: PetData): Promise<Pet> {
      ensureOpen();
      const [head, tail] = keyvTextAround(values, data);
      const id = await runCreate(createStatement([head, tail, data.status]));
      if (id === undefined) throw new Error("postgres storage: the create statement wrote nothing");
      return { id, name: data.name, categoryId: data.categoryId, status: data.status };
    },
    findReplay,
  };
}
