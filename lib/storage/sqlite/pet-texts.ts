/**
 * SQLite storage, the served text of each pet kept beside its index entry (`<table>_index.pet`),
 * so that a page is one range read of one table: no join to Keyv's table on a key built per row,
 * no Keyv envelope to unwrap. Keyv's table stays the record. Triggers on it set a pet's text to
 * NULL whenever its value is written or deleted by anyone (another process, another version,
 * a Keyv of its own), and a NULL text is read from Keyv's value instead, so the copy never serves
 * what the record no longer says. A file made before the column existed gains it on open.
 */
import type Keyv from "keyv";
import { petTextAround } from "../../json.ts";
import { petOfKeyvText, type RecordNames } from "../values.ts";
import { type Database, exec, queryAll } from "./connection.ts";

/** Rows filled per transaction when a file gains the column: short write locks for other processes. */
const FILL_BATCH = 500;

/** The id a Keyv key of this store names (`pets:<id>`), as SQL over the key expression `key`. */
const idOfKey = (key: string) => `CAST(substr(${key}, 6) AS INTEGER)`;

/**
 * Adds the `pet` column when the index table lacks it (a file of 1.0 or 1.1), in a transaction of
 * its own so that two processes opening the file together add it once; then creates the triggers
 * that keep it true. Resolves whether this call added the column.
 */
export async function addPetTexts(db: Database, table: string): Promise<boolean> {
  const hasColumn = async () =>
    (await queryAll(db, `PRAGMA table_info(${table}_index)`)).some((column) => column.name === "pet");
  let added = false;
  if (!(await hasColumn())) {
    await exec(db, "BEGIN IMMEDIATE");
    try {
      if (!(await hasColumn())) {
        await exec(db, `ALTER TABLE ${table}_index ADD COLUMN pet TEXT`);
        added = true;
      }
      await exec(db, "COMMIT");
    } catch (error) {
      await exec(db, "ROLLBACK").catch(() => {});
      throw error;
    }
  }
  // Any write of a value makes its pet's text stale: NULL, read from the value until rewritten.
  const forget = (key: string) =>
    `UPDATE ${table}_index SET pet = NULL WHERE id = ${idOfKey(key)} AND pet IS NOT NULL;`;
  const onKey = (key: string) => `${key} LIKE 'pets:%'`;
  await exec(
    db,
    `CREATE TRIGGER IF NOT EXISTS ${table}_values_inserted AFTER INSERT ON ${table}_values
       WHEN ${onKey("NEW.key")} BEGIN ${forget("NEW.key")} END;
     CREATE TRIGGER IF NOT EXISTS ${table}_values_updated AFTER UPDATE ON ${table}_values
       BEGIN ${forget("OLD.key")} ${forget("NEW.key")} END;
     CREATE TRIGGER IF NOT EXISTS ${table}_values_deleted AFTER DELETE ON ${table}_values
       WHEN ${onKey("OLD.key")} BEGIN ${forget("OLD.key")} END;`,
  );
  return added;
}

/** Whether a stored Keyv text carries an expiry time (none of the store's own creates does). */
function expiresSomeDay(raw: unknown): boolean {
  if (typeof raw !== "string" || !raw.includes('"expires"')) return false;
  try {
    return typeof (JSON.parse(raw) as { expires?: unknown }).expires === "number";
  } catch {
    return false;
  }
}

/**
 * Writes the served text of every indexed pet that has none, from its value in Keyv's table, a
 * batch per `BEGIN IMMEDIATE` transaction. A value that does not read as its pet keeps no text:
 * reads report it as they always did.
 */
export async function fillPetTexts(
  db: Database,
  table: string,
  values: Keyv<unknown>,
  names: RecordNames,
): Promise<void> {
  let after = 0;
  for (;;) {
    await exec(db, "BEGIN IMMEDIATE");
    try {
      const rows = await queryAll(
        db,
        `SELECT i.id AS id, v.value AS value FROM ${table}_index i LEFT JOIN ${table}_values v ON v.key = 'pets:' || i.id
           WHERE i.id > ? AND i.pet IS NULL ORDER BY i.id LIMIT ${FILL_BATCH}`,
        [after],
      );
      const filled: unknown[] = [];
      for (const row of rows) {
        const id = Number(row.id);
        after = id;
        if (expiresSomeDay(row.value)) continue; // Keyv would stop reading it one day: the value decides
        try {
          const [head, tail] = petTextAround(petOfKeyvText(id, row.value, values, names));
          filled.push(id, head + id + tail); // as a create writes it
        } catch {
          // not a pet: no text, and reads report the value as they always did
        }
      }
      // The batch in one statement (a call to the driver costs a hand-off to a thread and back).
      if (filled.length > 0) {
        const rowsOf = Array.from({ length: filled.length / 2 }, () => "(?, ?)").join(", ");
        await queryAll(
          db,
          `WITH t(id, pet) AS (VALUES ${rowsOf}) UPDATE ${table}_index SET pet = t.pet FROM t WHERE ${table}_index.id = t.id`,
          filled,
        );
      }
      await exec(db, "COMMIT");
      if (rows.length < FILL_BATCH) return;
    } catch (error) {
      await exec(db, "ROLLBACK").catch(() => {});
      throw error;
    }
  }
}
