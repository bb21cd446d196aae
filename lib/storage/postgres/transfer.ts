/**
 * Postgres storage, its side of moving data (export, import): the sequence, the key records in
 * (scope, key) order, and pets and records written at their ids, a batch per transaction (arrays
 * unnested: one statement a table). Pets are read with `list`.
 */
import type Keyv from "keyv";
import type { Pet } from "../../schemas.ts";
import type { ImportMark, KeyRecord, StorageTransfer } from "../port.ts";
import { freshKeys, keyName, keyRecordOfRow, markOfText, markText, missingPets } from "../transfer-checks.ts";
import { keyvTextAround, petOfKeyvText, type RecordNames } from "../values.ts";
import { type PgPool, UNIQUE_VIOLATION } from "./connection.ts";

/** Key records read per query. */
const KEY_PAGE = 1000;

type Client = Awaited<ReturnType<PgPool["connect"]>>;

export interface PostgresTransferParts {
  pool: PgPool;
  /** `<schema>.<table>`: the prefix of this store's tables and sequence. */
  qualified: string;
  values: Keyv<unknown>;
  /** Throws when the store is closed. */
  ensureOpen(): void;
  names: RecordNames;
}

/** The transfer calls of the Postgres store made of `parts`. */
export function makePostgresTransfer({
  pool,
  qualified,
  values,
  ensureOpen,
  names,
}: PostgresTransferParts): StorageTransfer {
  const sequence = `${qualified}_id_seq`;
  /** Runs `work` in a transaction on a client of its own: committed when it resolves `commit`. */
  const inTransaction = async <T>(work: (client: Client) => Promise<{ commit: boolean; result: T }>): Promise<T> => {
    ensureOpen();
    // A connection lost mid-transaction fails its query (the pool's clients listen for its "error": ./connection.ts).
    const client = await pool.connect();
    try {
      await client.query("BEGIN");
      const { commit, result } = await work(client);
      await client.query(commit ? "COMMIT" : "ROLLBACK");
      client.release();
      return result;
    } catch (error) {
      await client.query("ROLLBACK").catch(() => {});
      client.release(error instanceof Error ? error : new Error(String(error)));
      throw error;
    }
  };
  /**
   * Moves the sequence so that its last id taken is `last` or more, inside the caller's
   * transaction. ALTER SEQUENCE locks it against `nextval` until the transaction ends, so no create
   * takes an id between the read and `setval` (which would then move the sequence back).
   */
  const moveSequence = async (client: Client, last: number) => {
    await client.query(`ALTER SEQUENCE ${sequence} MAXVALUE 9007199254740991`);
    const [row] = (await client.query(`SELECT last_value, is_called FROM ${sequence}`)).rows;
    const taken = Number(row?.last_value) - (row?.is_called ? 0 : 1);
    if (last > taken) await client.query("SELECT setval($1, $2, true)", [sequence, last]);
  };

  /** Writes the pets of `pets` not stored yet, in one transaction (see `putPets`). */
  const writePets = (pets: readonly Pet[]): Promise<{ written: number } | { conflict: number }> =>
    inTransaction<{ written: number } | { conflict: number }>(async (client) => {
      const ids = pets.map((pet) => pet.id);
      const { rows } = await client.query(
        `SELECT i.id, (SELECT v.value FROM ${qualified}_values v WHERE v.key = 'pets:' || i.id) AS value
           FROM ${qualified}_index i WHERE i.id = ANY($1::bigint[])`,
        [ids],
      );
      const there = new Map(rows.map((row) => [Number(row.id), row.value]));
      const batch = missingPets(pets, (pet) =>
        there.has(pet.id) ? petOfKeyvText(pet.id, there.get(pet.id), values, names) : undefined,
      );
      if ("conflict" in batch) return { commit: false, result: batch };
      const { missing } = batch;
      if (missing.length > 0) {
        const texts = missing.map((pet) => {
          const [head, tail] = keyvTextAround(values, pet);
          return head + pet.id + tail;
        });
        await client.query(
          `INSERT INTO ${qualified}_values (key, value) SELECT * FROM unnest($1::text[], $2::text[])
             ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
          [missing.map((pet) => `pets:${pet.id}`), texts],
        );
        await client.query(
          `INSERT INTO ${qualified}_index (id, status) SELECT * FROM unnest($1::bigint[], $2::text[])`,
          [missing.map((pet) => pet.id), missing.map((pet) => pet.status)],
        );
      }
      await moveSequence(client, Math.max(...ids));
      return { commit: true, result: { written: missing.length } };
    });

  return {
    async nextId() {
      ensureOpen();
      const [row] = (await pool.query(`SELECT last_value, is_called FROM ${sequence}`)).rows;
      return Number(row?.last_value) + (row?.is_called ? 1 : 0);
    },
    async *keys(now: number) {
      let after = ["", ""];
      for (;;) {
        ensureOpen();
        const { rows } = await pool.query(
          `SELECT scope, key, fingerprint, pet_id, expires_at FROM ${qualified}_idempotency
             WHERE expires_at > $1 AND (scope, key) > ($2, $3) ORDER BY scope, key LIMIT ${KEY_PAGE}`,
          [now, ...after],
        );
        if (rows.length > 0) yield rows.map(keyRecordOfRow);
        const last = rows[rows.length - 1];
        if (rows.length < KEY_PAGE || last === undefined) return;
        after = [String(last.scope), String(last.key)];
      }
    },
    async putPets(pets: readonly Pet[]) {
      if (pets.length === 0) return { written: 0 };
      try {
        return await writePets(pets);
      } catch (error) {
        // Another import wrote some of them since this one looked: look again (the same pets are skipped).
        if ((error as { code?: unknown }).code !== UNIQUE_VIOLATION) throw error;
        return writePets(pets);
      }
    },
    async advanceIds(next: number) {
      if (next <= 1) return;
      await inTransaction(async (client) => {
        await moveSequence(client, next - 1);
        return { commit: true, result: undefined };
      });
    },
    async importMark() {
      ensureOpen();
      const [row] = (await pool.query(`SELECT value FROM ${qualified}_meta WHERE name = 'import'`)).rows;
      return row === undefined ? undefined : markOfText(row.value, "postgres", `${qualified}_meta:import`);
    },
    async setImportMark(mark: ImportMark | undefined) {
      ensureOpen();
      if (mark === undefined) await pool.query(`DELETE FROM ${qualified}_meta WHERE name = 'import'`);
      else {
        await pool.query(
          `INSERT INTO ${qualified}_meta (name, value) VALUES ('import', $1) ON CONFLICT (name) DO UPDATE SET value = excluded.value`,
          [markText(mark)],
        );
      }
    },
    async undoImport(mark: ImportMark) {
      let pets = 0;
      let keys = 0;
      // One transaction per range: its values, index entries and key records.
      for (const [first, last] of mark.pets) {
        const removed = await inTransaction(async (client) => {
          const range = [first, last];
          await client.query(
            `DELETE FROM ${qualified}_values WHERE key IN (SELECT 'pets:' || id FROM ${qualified}_index WHERE id BETWEEN $1 AND $2)`,
            range,
          );
          const index = await client.query(`DELETE FROM ${qualified}_index WHERE id BETWEEN $1 AND $2`, range);
          const records = await client.query(
            `DELETE FROM ${qualified}_idempotency WHERE pet_id BETWEEN $1 AND $2`,
            range,
          );
          return { commit: true, result: { pets: Number(index.rowCount), keys: Number(records.rowCount) } };
        });
        pets += removed.pets;
        keys += removed.keys;
      }
      await inTransaction(async (client) => {
        await client.query(`ALTER SEQUENCE ${sequence} MAXVALUE 9007199254740991`);
        await client.query("SELECT setval($1, $2, $3)", [sequence, Math.max(1, mark.lastId), mark.lastId > 0]);
        return { commit: true, result: undefined };
      });
      return { pets, keys };
    },
    async putKeys(records: readonly KeyRecord[], now: number) {
      if (records.length === 0) return { written: 0 };
      return inTransaction<{ written: number } | { conflict: KeyRecord }>(async (client) => {
        const { rows } = await client.query(
          `SELECT scope, key, fingerprint, pet_id, expires_at FROM ${qualified}_idempotency
             WHERE (scope, key) IN (SELECT * FROM unnest($1::text[], $2::text[])) AND expires_at > $3`,
          [records.map((r) => r.scope), records.map((r) => r.key), now],
        );
        const live = new Map(rows.map(keyRecordOfRow).map((record) => [keyName(record), record]));
        const batch = freshKeys(records, (record) => live.get(keyName(record)));
        if ("conflict" in batch) return { commit: false, result: batch };
        const { fresh } = batch;
        if (fresh.length > 0) {
          await client.query(
            `INSERT INTO ${qualified}_idempotency (scope, key, fingerprint, pet_id, expires_at)
               SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bigint[])
               ON CONFLICT (scope, key) DO UPDATE SET fingerprint = excluded.fingerprint, pet_id = excluded.pet_id, expires_at = excluded.expires_at`,
            [
              fresh.map((r) => r.scope),
              fresh.map((r) => r.key),
              fresh.map((r) => r.fingerprint),
              fresh.map((r) => r.petId),
              fresh.map((r) => r.expiresAt),
            ],
          );
        }
        return { commit: true, result: { written: fresh.length } };
      });
    },
  };
}
