/**
 * The checks of an import's input, line by line, before anything is written: the header, each pet
 * (the rules of a create, ascending ids), each key (a pet of the file, once), the end line's
 * counts and digest. A failure is an ImportError naming the line.
 */
import { createHash, type Hash } from "node:crypto";
import type { Pet } from "../lib/schemas.ts";
import type { KeyRecord } from "../lib/storage/port.ts";
import { keyName } from "../lib/storage/transfer-checks.ts";
import { type ExportHeader, ImportError, readHeader, readRecord } from "./format.ts";
import { IdList } from "./id-list.ts";

/** The checks of an input, line by line; `take` throws an ImportError naming the line. */
export class InputCheck {
  header: ExportHeader | undefined;
  private line = 0;
  private readonly digest: Hash = createHash("sha256");
  private keyCount = 0;
  private ended = false;
  /** The pet ids, ascending (a key must name one of them). */
  private readonly ids = new IdList();
  private readonly keyNames = new Set<string>();

  /** The last pet's id (0 before the first). */
  private get lastId(): number {
    return this.ids.at(this.ids.size - 1) ?? 0;
  }

  /** `where(n)`: how messages name line n (`pets.ndjson line 3`, `record 3`). */
  constructor(private readonly where: (line: number) => string) {}

  private fail(reason: string, line = this.line): never {
    throw new ImportError(`${this.where(line)}: ${reason}`);
  }

  /** Checks the next line (its text without the line feed): the pet or key it holds, if any. */
  take(text: string): { pet: Pet } | { key: KeyRecord } | undefined {
    this.line++;
    if (this.ended) {
      if (text === "") return undefined; // a line feed after the end line
      this.fail("a line after the end line");
    }
    if (this.header === undefined) {
      let value: unknown;
      try {
        value = JSON.parse(text);
      } catch {
        this.fail(`not a petstore export (its first line is not JSON)`);
      }
      try {
        this.header = readHeader(value);
      } catch (error) {
        this.fail((error as Error).message);
      }
      this.digest.update(`${text}\n`);
      return undefined;
    }
    let record: ReturnType<typeof readRecord>;
    try {
      record = readRecord(text);
    } catch (error) {
      this.fail((error as Error).message);
    }
    if ("end" in record) {
      if (record.sha256 !== this.digest.digest("hex")) {
        this.fail("the digest does not match the lines before it: the file was changed or cut short");
      }
      if (this.ids.size !== this.header.pets || this.keyCount !== this.header.keys) {
        this.fail(
          `the header says ${this.header.pets} pets and ${this.header.keys} keys; the file holds ${this.ids.size} and ${this.keyCount}`,
        );
      }
      if (this.header.nextId <= this.lastId)
        this.fail(`the header's nextId ${this.header.nextId} is not above the last pet's id ${this.lastId}`, 1);
      this.ended = true;
      return undefined;
    }
    this.digest.update(`${text}\n`);
    if ("pet" in record) {
      if (this.keyCount > 0) this.fail("a pet after the keys (pets come first)");
      if (record.pet.id <= this.lastId)
        this.fail(`pet ${record.pet.id} is not above the pet before it (${this.lastId}): pets come in ascending id`);
      this.ids.push(record.pet.id);
      return record;
    }
    const name = keyName(record.key);
    if (this.keyNames.has(name)) this.fail("a key given twice (the same scope and key)");
    if (!this.ids.has(record.key.petId)) this.fail(`the key names pet ${record.key.petId}, which is not in the file`);
    this.keyNames.add(name);
    this.keyCount++;
    return record;
  }

  /** The checks once every line is read: the header and end were there. */
  finish(): { header: ExportHeader; maxId: number } {
    if (this.header === undefined) this.fail("empty: not a petstore export", 1);
    if (!this.ended) this.fail("no end line: the file was cut short", this.line);
    return { header: this.header, maxId: this.lastId };
  }
}
