/**
 * SQLite storage, its side of moving data (export, import): the sequence, the key records in
 * (scope, key) order, and pets and records written at their ids, a batch per `BEGIN IMMEDIATE`
 * transaction on the write connection (after the writes queued before it). Pets are read with `list`.
 */
import type Keyv from "keyv";
import { petTextAround } from "../../json.ts";
import type { Pet } from "../../schemas.ts";
import type { ImportMark, KeyRecord, StorageTransfer } from "../port.ts";
import { freshKeys, keyName, keyRecordOfRow, markOfText, markText, missingPets } from "../transfer-checks.ts";
import { keyvTextAround, petOfKeyvText, type RecordNames } from "../values.ts";
import { type Database, exec, queryAll } from "./connection.ts";

/** Key records read per query. */
const KEY_PAGE = 1000;

export interface SqliteTransferParts {
  db: Database;
  table: string;
  values: Keyv<unknown>;
  /** Runs `work` after every write this process started before it. */
  serialise<T>(work: () => Promise<T>): Promise<T>;
  /** Throws when the store is closed or its file is gone; `write` checks the file itself. */
  ensureOpen(write?: "write"): void;
  names: RecordNames;
}

/** `count` groups of `size` placeholders: `(?, ?), (?, ?)`. */
const placeholders = (count: number, size: number) =>
  Array.from({ length: count }, () => `(${Array.from({ length: size }, () => "?").join(", ")})`).join(", ");

/** The transfer calls of the SQLite store made of `parts`. */
export function makeSqliteTransfer({
  db,
  table,
  values,
  serialise,
  ensureOpen,
  names,
}: SqliteTransferParts): StorageTransfer {
  /** Runs `work` in one `BEGIN IMMEDIATE` transaction, after the writes before it: committed when it resolves `commit`. */
  const inTransaction = <T>(work: () => Promise<{ commit: boolean; result: T }>): Promise<T> =>
    serialise(async () => {
      await exec(db, "BEGIN IMMEDIATE");
      try {
        const { commit, result } = await work();
        await exec(db, commit ? "COMMIT" : "ROLLBACK");
        return result;
      } catch (error) {
        await exec(db, "ROLLBACK").catch(() => {});
        throw error;
      }
    });

  return {
    async nextId() {
      ensureOpen();
      const [row] = await serialise(() => queryAll(db, `SELECT value FROM ${table}_seq WHERE id = 1`));
      return Number(row?.value ?? 0) + 1;
    },
    async *keys(now: number) {
      let after: [string, string] = ["", ""];
      for (;;) {
        ensureOpen();
        const rows = await serialise(() =>
          queryAll(
            db,
            `SELECT scope, key, fingerprint, pet_id, expires_at FROM ${table}_idempotency
               WHERE expires_at > ? AND (scope, key) > (?, ?) ORDER BY scope, key LIMIT ${KEY_PAGE}`,
            [now, ...after],
          ),
        );
        if (rows.length > 0) yield rows.map(keyRecordOfRow);
        const last = rows[rows.length - 1];
        if (rows.length < KEY_PAGE || last === undefined) return;
        after = [String(last.scope), String(last.key)];
      }
    },
    async putPets(pets: readonly Pet[]) {
      ensureOpen("write");
      if (pets.length === 0) return { written: 0 };
      return inTransaction<{ written: number } | { conflict: number }>(async () => {
        const ids = pets.map((pet) => pet.id);
        const stored = await queryAll(
          db,
          `SELECT i.id AS id, v.value AS value FROM ${table}_index i LEFT JOIN ${table}_values v ON v.key = 'pets:' || i.id
             WHERE i.id IN (${ids.map(() => "?").join(", ")})`,
          ids,
        );
        const there = new Map(stored.map((row) => [Number(row.id), row.value]));
        const batch = missingPets(pets, (pet) =>
          there.has(pet.id) ? petOfKeyvText(pet.id, there.get(pet.id), values, names) : undefined,
        );
        if ("conflict" in batch) return { commit: false, result: batch };
        const { missing } = batch;
        if (missing.length > 0) {
          // The value before the index entry (its trigger clears the entry's text), as a create writes them.
          const valueRows: unknown[] = [];
          const indexRows: unknown[] = [];
          for (const pet of missing) {
            const [head, tail] = keyvTextAround(values, pet);
            const [before, after] = petTextAround(pet);
            valueRows.push(`pets:${pet.id}`, head + pet.id + tail);
            indexRows.push(pet.id, pet.status, before + pet.id + after);
          }
          await queryAll(
            db,
            `INSERT OR REPLACE INTO ${table}_values (key, value) VALUES ${placeholders(missing.length, 2)}`,
            valueRows,
          );
          await queryAll(
            db,
            `INSERT INTO ${table}_index (id, status, pet) VALUES ${placeholders(missing.length, 3)}`,
            indexRows,
          );
        }
        await queryAll(db, `UPDATE ${table}_seq SET value = max(value, ?) WHERE id = 1`, [Math.max(...ids)]);
        return { commit: true, result: { written: missing.length } };
      });
    },
    async advanceIds(next: number) {
      ensureOpen("write");
      await serialise(() => queryAll(db, `UPDATE ${table}_seq SET value = max(value, ?) WHERE id = 1`, [next - 1]));
    },
    async importMark() {
      ensureOpen();
      const [row] = await serialise(() => queryAll(db, `SELECT value FROM ${table}_meta WHERE name = 'import'`));
      return row === undefined ? undefined : markOfText(row.value, "sqlite", `${table}_meta:import`);
    },
    async setImportMark(mark: ImportMark | undefined) {
      ensureOpen("write");
      await serialise(() =>
        mark === undefined
          ? queryAll(db, `DELETE FROM ${table}_meta WHERE name = 'import'`)
          : queryAll(db, `INSERT OR REPLACE INTO ${table}_meta (name, value) VALUES ('import', ?)`, [markText(mark)]),
      );
    },
    async undoImport(mark: ImportMark) {
      ensureOpen("write");
      let pets = 0;
      let keys = 0;
      // One transaction per range: the value before the index entry, as a create writes them.
      for (const [first, last] of mark.pets) {
        const counts = await inTransaction(async () => {
          const range = [first, last];
          const [counted] = await queryAll(
            db,
            `SELECT (SELECT count(*) FROM ${table}_index WHERE id BETWEEN ?1 AND ?2) AS pets,
               (SELECT count(*) FROM ${table}_idempotency WHERE pet_id BETWEEN ?1 AND ?2) AS keys`,
            range,
          );
          await queryAll(
            db,
            `DELETE FROM ${table}_values WHERE key IN (SELECT 'pets:' || id FROM ${table}_index WHERE id BETWEEN ? AND ?)`,
            range,
          );
          await queryAll(db, `DELETE FROM ${table}_index WHERE id BETWEEN ? AND ?`, range);
          await queryAll(db, `DELETE FROM ${table}_idempotency WHERE pet_id BETWEEN ? AND ?`, range);
          return { commit: true, result: { pets: Number(counted?.pets), keys: Number(counted?.keys) } };
        });
        pets += counts.pets;
        keys += counts.keys;
      }
      await serialise(() => queryAll(db, `UPDATE ${table}_seq SET value = ? WHERE id = 1`, [mark.lastId]));
      return { pets, keys };
    },
    async putKeys(records: readonly KeyRecord[], now: number) {
      ensureOpen("write");
      if (records.length === 0) return { written: 0 };
      return inTransaction<{ written: number } | { conflict: KeyRecord }>(async () => {
        const stored = await queryAll(
          db,
          `SELECT scope, key, fingerprint, pet_id, expires_at FROM ${table}_idempotency
             WHERE (scope, key) IN (VALUES ${placeholders(records.length, 2)}) AND expires_at > ?`,
          [...records.flatMap(({ scope, key }) => [scope, key]), now],
        );
        const live = new Map(stored.map(keyRecordOfRow).map((record) => [keyName(record), record]));
        const batch = freshKeys(records, (record) => live.get(keyName(record)));
        if ("conflict" in batch) return { commit: false, result: batch };
        const { fresh } = batch;
        if (fresh.length > 0) {
          await queryAll(
            db,
            `INSERT OR REPLACE INTO ${table}_idempotency (scope, key, fingerprint, pet_id, expires_at) VALUES ${placeholders(fresh.length, 5)}`,
            fresh.flatMap((r) => [r.scope, r.key, r.fingerprint, r.petId, r.expiresAt]),
          );
        }
        return { commit: true, result: { written: fresh.length } };
      });
    },
  };
}
