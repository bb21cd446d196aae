/**
 * SQLite's served copy of a pet (`<table>_index.pet`, sqlite/pet-texts.ts) is a cache of Keyv's
 * record, never trusted over it: a copy that is not a valid Pet is answered from the record, and
 * rewritten from it. Only when the record itself is bad is the request a `500`.
 */
import type Keyv from "keyv";
import { petTextAround } from "../../json.ts";
import type { Pet } from "../../schemas.ts";
import type { ListPage } from "../port.ts";
import { petOfKeyvText, type RecordNames, readPageSkipping } from "../values.ts";
import { type Database, queryAll } from "./connection.ts";
import type { WriteQueue } from "./writes.ts";

/** What repairs need: the write connection and its queue, the store's table and Keyv. */
export interface CopyRepairs {
  db: Database;
  table: string;
  values: Keyv<unknown>;
  /** Runs a write after the writes before it (the store's write queue). */
  serialise: WriteQueue["serialise"];
  names: RecordNames;
}

/** The contract's text of a pet, as creates write the copy. */
const servedText = (pet: Pet) => {
  const [head, tail] = petTextAround(pet);
  return `${head}${pet.id}${tail}`;
};

/**
 * The pets of a page read from Keyv's records, each bad copy among them rewritten from its record:
 * when a copy was found bad. A record that is bad itself fails the page, or with `page.onInvalid`
 * is left out and told.
 */
export async function readFromRecords(
  { db, table, values, serialise, names }: CopyRepairs,
  page: ListPage,
): Promise<Pet[]> {
  const where = page.status === undefined ? "i.id > ?" : "i.status = ? AND i.id > ?";
  const copies = new Map<number, unknown>();
  // On the write connection, between its writes: never inside one's transaction.
  const readRows = (after: number, count: number) =>
    serialise(async () => {
      const params = page.status === undefined ? [after, count] : [page.status, after, count];
      const rows = await queryAll(
        db,
        `SELECT i.id AS id, i.pet AS pet, v.value AS value FROM ${table}_index i LEFT JOIN ${table}_values v ON v.key = 'pets:' || i.id WHERE ${where} ORDER BY i.id LIMIT ?`,
        params,
      );
      return rows.map((row) => {
        const id = Number(row.id);
        copies.set(id, row.pet);
        return { id, value: row.value };
      });
    });
  const pets = await readPageSkipping(page, readRows, (row) => petOfKeyvText(row.id, row.value, values, names));
  await serialise(async () => {
    for (const pet of pets) {
      const copy = copies.get(pet.id);
      const text = servedText(pet);
      if (copy !== null && copy !== text) {
        await queryAll(db, `UPDATE ${table}_index SET pet = ? WHERE id = ?`, [text, pet.id]);
      }
    }
  });
  return pets;
}

/** Pet `id` read from Keyv's record, its copy rewritten from it: when the copy was found bad. */
export async function getFromRecord(repairs: CopyRepairs, id: number): Promise<Pet | undefined> {
  const [pet] = await readFromRecords(repairs, { after: id - 1, limit: 1 });
  return pet?.id === id ? pet : undefined;
}
