/**
 * Redis storage, its side of moving data (export, import): the sequence, the key records found by
 * SCAN, and pets and records written at their ids, a batch per script (atomic, and one slot on a
 * cluster: every key of the store shares its hash tag). Pets are read with `list`.
 */
import type Keyv from "keyv";
import type { Pet, PetStatus } from "../../schemas.ts";
import { InvalidRecordError } from "../failures.ts";
import type { ImportMark, KeyRecord, StorageTransfer } from "../port.ts";
import { markOfText, markText, missingPets } from "../transfer-checks.ts";
import { keyvTextAround, petOfKeyvText, type RecordNames } from "../values.ts";
import type { RedisConnection } from "./connection.ts";
import type { IdTaking } from "./id-guess.ts";
import {
  blameKeys,
  PUT_PETS,
  PUT_RECORDS,
  RAISE_SEQUENCE,
  REMOVE_PETS,
  readReply,
  runScript,
  SET_MARK,
  SET_SEQUENCE,
} from "./scripts.ts";

/** Where the store's data lives (redis/index.ts, nameKeys). */
export interface RedisKeyNames {
  prefix: string;
  sequence: string;
  index(status?: PetStatus): string;
  value(id: string): string;
  record(scope: string, key: string): string;
}

export interface RedisTransferParts {
  connection: RedisConnection;
  keys: RedisKeyNames;
  values: Keyv<unknown>;
  /** The store's id taking: a move of the sequence is one it cannot count. */
  ids: IdTaking;
  /** Throws when the store is closed. */
  ensureOpen(): void;
  names: RecordNames;
}

/** Pets removed per script when an import is undone. */
const UNDO_BATCH = 1000;

/** KEYS numbers of the status indexes in PUT_PETS. */
const STATUS_KEY: Record<PetStatus, string> = { available: "3", pending: "4", sold: "5" };

const RECORD_TEXT = /^(\S+) ([0-9]+) ([0-9]+)$/;

/** The scope and key a record's name holds (`<prefix>:idem:<scope length>:<scope>:<key>`), or undefined. */
function scopeAndKey(name: string, start: string): { scope: string; key: string } | undefined {
  if (!name.startsWith(start)) return undefined;
  const rest = name.slice(start.length);
  const colon = rest.indexOf(":");
  const length = Number(rest.slice(0, colon));
  if (colon < 1 || !Number.isSafeInteger(length) || rest[colon + 1 + length] !== ":") return undefined;
  return { scope: rest.slice(colon + 1, colon + 1 + length), key: rest.slice(colon + 2 + length) };
}

/** The transfer calls of the Redis store made of `parts`. */
export function makeRedisTransfer({
  connection,
  keys,
  values,
  ids,
  ensureOpen,
  names,
}: RedisTransferParts): StorageTransfer {
  const { commands, exact } = connection;
  const markKey = `${keys.prefix}:import`;
  const notAnInteger = () => new InvalidRecordError("redis", keys.sequence, "the id sequence does not hold an integer");
  /** Runs a script that may move the sequence; `invalid` means the sequence holds no integer. */
  const runMoving = async (script: typeof PUT_PETS, keyList: string[], args: string[]) => {
    const reply = readReply(
      await blameKeys(
        ids.uncounted(() => runScript(exact, script, keyList, args)),
        keyList.slice(0, 5),
      ),
    );
    if (reply[0] === "invalid") throw notAnInteger();
    return reply;
  };
  return {
    async nextId() {
      ensureOpen();
      const raw = await blameKeys(exact.get(keys.sequence), [keys.sequence]);
      const last = raw === null || raw === undefined ? 0 : Number(raw);
      if (!Number.isSafeInteger(last)) throw notAnInteger();
      return last + 1;
    },
    async *keys(now: number) {
      const start = `${keys.prefix}:idem:`;
      const seen = new Set<string>(); // SCAN may name a key twice
      ensureOpen();
      for await (const batch of connection.scan(`${start}*`)) {
        const fresh = batch.filter((name) => !seen.has(name));
        for (const name of fresh) seen.add(name);
        if (fresh.length === 0) continue;
        const texts = await commands.mGet(fresh);
        const records: KeyRecord[] = [];
        fresh.forEach((name, i) => {
          const text = texts[i];
          if (text === null || text === undefined) return; // expired meanwhile
          const named = scopeAndKey(name, start);
          const parts = RECORD_TEXT.exec(String(text));
          if (named === undefined || parts === null) {
            throw new InvalidRecordError("redis", name, "not a key record (<fingerprint> <pet id> <expires at>)");
          }
          const record = {
            ...named,
            fingerprint: parts[1] as string,
            petId: Number(parts[2]),
            expiresAt: Number(parts[3]),
          };
          if (record.expiresAt > now) records.push(record);
        });
        if (records.length > 0) yield records;
        ensureOpen();
      }
    },
    async putPets(pets: readonly Pet[]) {
      ensureOpen();
      if (pets.length === 0) return { written: 0 };
      const valueKeys = pets.map((pet) => keys.value(String(pet.id)));
      const stored = await commands.mGet(valueKeys);
      const raws = new Map(pets.map((pet, i) => [pet.id, stored[i]]));
      const batch = missingPets(pets, (pet) => {
        const raw = raws.get(pet.id);
        return raw === null || raw === undefined ? undefined : petOfKeyvText(pet.id, raw, values, names);
      });
      if ("conflict" in batch) return batch;
      // The script writes each pet still absent when it runs (a pet found here stays as it is).
      const args = [String(Math.max(...pets.map((pet) => pet.id)))];
      for (const pet of pets) {
        const [head, tail] = keyvTextAround(values, pet);
        args.push(String(pet.id), STATUS_KEY[pet.status], head + pet.id + tail);
      }
      const statusIndexes = [keys.index("available"), keys.index("pending"), keys.index("sold")];
      const reply = await runMoving(PUT_PETS, [keys.sequence, keys.index(), ...statusIndexes, ...valueKeys], args);
      return { written: Number(reply[1]) };
    },
    async advanceIds(next: number) {
      ensureOpen();
      if (next > 1) await runMoving(RAISE_SEQUENCE, [keys.sequence], [String(next - 1)]);
    },
    async importMark() {
      ensureOpen();
      const text = await blameKeys(commands.get(markKey), [markKey]);
      return text === null || text === undefined ? undefined : markOfText(text, "redis", markKey);
    },
    async setImportMark(mark: ImportMark | undefined) {
      ensureOpen();
      await runScript(exact, SET_MARK, [markKey], [mark === undefined ? "" : markText(mark)]);
    },
    async undoImport(mark: ImportMark) {
      ensureOpen();
      const indexes = [keys.index(), keys.index("available"), keys.index("pending"), keys.index("sold")];
      let pets = 0;
      for (const [first, last] of mark.pets) {
        for (;;) {
          const ids = await commands.zRangeByScore(keys.index(), String(first), String(last), {
            LIMIT: { offset: 0, count: UNDO_BATCH },
          });
          if (ids.length === 0) break;
          const members = ids.map(String);
          await runScript(exact, REMOVE_PETS, [...indexes, ...members.map(keys.value)], members);
          pets += members.length;
        }
      }
      // The key records of those pets: found with SCAN, as an export finds them.
      let removed = 0;
      const start = `${keys.prefix}:idem:`;
      const inRanges = (id: number) => mark.pets.some(([first, last]) => id >= first && id <= last);
      for await (const batch of connection.scan(`${start}*`)) {
        if (batch.length === 0) continue;
        const texts = await commands.mGet(batch);
        const doomed = batch.filter((_, i) => inRanges(Number(RECORD_TEXT.exec(String(texts[i]))?.[2])));
        if (doomed.length > 0) removed += Number(await commands.unlink(doomed));
      }
      await runScript(exact, SET_SEQUENCE, [keys.sequence], [String(mark.lastId)]);
      return { pets, keys: removed };
    },
    async putKeys(records: readonly KeyRecord[], now: number) {
      ensureOpen();
      if (records.length === 0) return { written: 0 };
      const args = [String(now)];
      for (const r of records)
        args.push(`${r.fingerprint} ${r.petId} ${r.expiresAt}`, String(Math.max(1, Math.ceil(r.expiresAt - now))));
      const recordKeys = records.map((r) => keys.record(r.scope, r.key));
      const reply = readReply(await blameKeys(runScript(exact, PUT_RECORDS, recordKeys, args), recordKeys.slice(0, 5)));
      if (reply[0] === "conflict") return { conflict: records[Number(reply[1]) - 1] as KeyRecord };
      return { written: Number(reply[1]) };
    },
  };
}
