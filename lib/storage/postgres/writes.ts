/**
 * Postgres storage, its creates: each is one prepared statement, so one round trip and one
 * transaction (the next id, the value in Keyv's format, the index entry). An idempotent one also
 * takes an advisory lock on the key and writes the key's record with the pet, or nothing when the
 * lock is taken or an unexpired record exists. Steps: docs/STORAGE.md, "Postgres creates".
 */
import type Keyv from "keyv";
import type { Pet } from "../../schemas.ts";
import type { CreateOnceResult, IdempotencyRecord, PetData } from "../port.ts";
import { checkNewId, keyvTextAround, petOfKeyvText, sequenceExhausted } from "../values.ts";
import { nameStatement, type PgNamedQuery, type PgPool } from "./connection.ts";

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

/**
 * The write path of a store on `pool`, its tables named `<qualified>_*` (schema-qualified) and its
 * values in `values`; each call first runs `ensureOpen`.
 */
export function makeWriter(
  pool: PgPool,
  qualified: string,
  values: Keyv<unknown>,
  ensureOpen: () => void,
): PostgresWriter {
  const keyTable = `${qualified}_idempotency`;
  const createStatement = buildCreateStatement(qualified, "create");
  const createOnceStatement = buildCreateStatement(qualified, "createOnce");
  /** Runs a create statement: the id it created, or undefined when it wrote nothing. */
  const runCreate = async (statement: PgNamedQuery): Promise<number | undefined> => {
    let row: Record<string, unknown> | undefined;
    try {
      row = (await pool.query(statement)).rows[0];
    } catch (error) {
      if ((error as { code?: unknown }).code === SEQUENCE_EXHAUSTED) throw sequenceExhausted("postgres");
      throw error;
    }
    return row?.created === null || row?.created === undefined
      ? undefined
      : checkNewId(Number(row.created), "postgres");
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
    return { pet: petOfKeyvText(id, raw?.value, values, "postgres"), replayed: true };
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
