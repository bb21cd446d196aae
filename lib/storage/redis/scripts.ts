/**
 * The Lua scripts of the Redis storage. Each declares in KEYS every key it reads or writes, as
 * Redis asks of scripts (a cluster routes a script by its keys; servers such as Dragonfly refuse
 * undeclared ones), so the id a create takes comes from a step before the script that writes it.
 * Details: docs/STORAGE.md, "Redis creates and pages".
 */
import { sha1Hex } from "../../digest.ts";
import { blamed } from "../failures.ts";

/** A Lua script and its SHA-1, run with EVALSHA (EVAL once when the server does not have it yet). */
export interface Script {
  source: string;
  sha: string;
}

const hashScript = (source: string): Script => ({ source, sha: sha1Hex(source) });

/**
 * Lua that lets the key's record at `record` decide, as every keyed script does first: a record of
 * another fingerprint answers `reused`, one of this `fingerprint` the replay of its pet; one that
 * expired by `now` counts as absent (the script goes on).
 */
const decideByRecord = (record: string, fingerprint: string, now: string) => `local rec = redis.call('GET', ${record})
if rec then
  local fp, id, exp = string.match(rec, '^(%S+) (%S+) (%S+)$')
  if not (fp and tonumber(id) and tonumber(exp)) then return {'invalid', 'record'} end
  if tonumber(exp) > tonumber(${now}) then
    if fp ~= ${fingerprint} then return {'reused'} end
    return {'replayed', id}
  end
end`;

/** Lua that reads the sequence at `sequence` as `last`, or answers `invalid` when it holds no integer. */
const readSequence = (sequence: string) => `local last = tonumber(redis.call('GET', ${sequence}) or '0')
if not last or last ~= math.floor(last) then return {'invalid', 'sequence'} end`;

/**
 * Lua that answers `taken` when a pet's value is already stored at the id a create took: the
 * sequence stands behind the stored pets (a restored database), and nothing is written.
 */
const refuseTaken = (value: string) => `if redis.call('EXISTS', ${value}) == 1 then return {'taken'} end`;

/**
 * Lua that writes a pet: its value (Keyv's key and format) before both index entries, so that a
 * pet read through an index always has its value.
 */
const writePet = (value: string, all: string, byStatus: string, id: string, text: string) =>
  `redis.call('SET', ${value}, ${text})
redis.call('ZADD', ${all}, ${id}, ${id})
redis.call('ZADD', ${byStatus}, ${id}, ${id})`;

/** Lua that writes a key's record, "<fingerprint> <pet id> <expires at>", expiring with it. */
const writeRecord = (record: string, fingerprint: string, id: string, expiresAt: string, ttlMs: string) =>
  `redis.call('SET', ${record}, ${fingerprint} .. ' ' .. ${id} .. ' ' .. ${expiresAt}, 'PX', ${ttlMs})`;

/**
 * The first step of an idempotent create: the key's record decides (a replay of its pet, or
 * `reused` for another fingerprint), or the next id is taken. KEYS: the record, the sequence.
 * ARGV: fingerprint, now, the largest id. A record is "<fingerprint> <pet id> <expires at>"; one
 * that expired by `now` (by the caller's clock) counts as absent; a record or a sequence that cannot
 * be read answers `invalid` and which (`record`, `sequence`): a create then fails closed.
 */
export const CLAIM = hashScript(`
${decideByRecord("KEYS[1]", "ARGV[1]", "ARGV[2]")}
${readSequence("KEYS[2]")}
if last >= tonumber(ARGV[3]) then return {'exhausted'} end
return {'next', string.format('%d', redis.call('INCR', KEYS[2]))}
`);

/**
 * The first step of a plain create that was not guessed: the next id, or `invalid` when the
 * sequence holds no integer, `exhausted` at the largest id. KEYS: the sequence. ARGV: the largest id.
 */
export const NEXT_ID = hashScript(`
${readSequence("KEYS[1]")}
if last >= tonumber(ARGV[1]) then return {'exhausted'} end
return {'next', string.format('%d', redis.call('INCR', KEYS[1]))}
`);

/**
 * Moves the sequence up to the highest id in the index of all pets when it stands below (a
 * database restored from a backup made before its last creates): answers `moved` with where it
 * stood and where it stands, or `kept`. KEYS: the sequence, the index of all pets.
 */
export const REPAIR_SEQUENCE = hashScript(`
${readSequence("KEYS[1]")}
local top = redis.call('ZREVRANGE', KEYS[2], 0, 0, 'WITHSCORES')
local stored = tonumber(top[2] or '0')
if stored and stored > last then
  redis.call('SET', KEYS[1], string.format('%d', stored))
  return {'moved', string.format('%d', last), string.format('%d', stored)}
end
return {'kept'}
`);

/**
 * The second step of every create, atomic: the value (Keyv's key and format) before both index
 * entries, and for an idempotent create the key's record; unless a record written since the first
 * step holds the key (then nothing is written, and the id taken stays unused).
 * KEYS: the value, the index of all pets, the index of the pet's status, and (idempotent creates
 * only) the record. ARGV: the id, the value's text; then fingerprint, now, expires at, time to live (ms).
 */
export const WRITE = hashScript(`
if KEYS[4] then
${decideByRecord("KEYS[4]", "ARGV[3]", "ARGV[4]")}
end
${refuseTaken("KEYS[1]")}
${writePet("KEYS[1]", "KEYS[2]", "KEYS[3]", "ARGV[1]", "ARGV[2]")}
if KEYS[4] then ${writeRecord("KEYS[4]", "ARGV[3]", "ARGV[1]", "ARGV[5]", "ARGV[6]")} end
return {'created'}
`);

/** What runs scripts: a client, a cluster, or one node's client. */
export interface ScriptRunner {
  evalSha(sha: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
  eval(source: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
}

/** True for node-redis's error replies (`ErrorReply` and its kinds), whatever copy of the driver made them. */
function isErrorReply(error: unknown): error is Error {
  for (let kind = error instanceof Error ? error.constructor : undefined; kind; kind = Object.getPrototypeOf(kind)) {
    if (kind.name === "ErrorReply") return true;
  }
  return false;
}

/** The RESP error code of a reply, its first word (`NOSCRIPT`, `WRONGTYPE`…); undefined for another error. */
export function replyCode(error: unknown): string | undefined {
  return isErrorReply(error) ? /^([A-Z]+)[ \n]/.exec(error.message)?.[1] : undefined;
}

/** True for the reply of a server that does not know the script yet. */
export const isNoScript = (error: unknown) => replyCode(error) === "NOSCRIPT";

/** Why Redis refused a key's value, when its reply's code says so (`failures.ts`, `blamed`); else undefined. */
export function redisBlamesValue(error: unknown): string | undefined {
  return replyCode(error) === "WRONGTYPE" ? "it holds a value of another type (WRONGTYPE)" : undefined;
}

/** `promise`, unless Redis blames the value of a key of `keyList` (those a command or script touched): then that record. */
export async function blameKeys<T>(promise: Promise<T>, keyList: readonly string[]): Promise<T> {
  try {
    return await promise;
  } catch (error) {
    throw blamed(error, "redis", keyList.join(" or "), redisBlamesValue);
  }
}

/** Runs `lua` by its SHA; a server that does not know it yet (NOSCRIPT) gets its source once. */
export function runScript(client: ScriptRunner, lua: Script, keys: string[], args: string[]): Promise<unknown> {
  const options = { keys, arguments: args };
  return client.evalSha(lua.sha, options).catch((error: unknown) => {
    if (!isNoScript(error)) throw error;
    return client.eval(lua.source, options);
  });
}

/** A script's reply as the texts of a flat array (an unexpected reply gives an empty one). */
export const readReply = (reply: unknown): string[] => (Array.isArray(reply) ? reply.map(String) : []);

/**
 * A plain create in one round trip, at the id the store guessed (redis/id-guess.ts): when the
 * sequence stands just below it, takes it and writes the value before both index entries, as WRITE
 * does; else writes nothing and answers `moved`. KEYS: the sequence, the value, the index of all
 * pets, the index of the pet's status. ARGV: the id, the value's text.
 */
export const WRITE_AT = hashScript(`
${readSequence("KEYS[1]")}
if last + 1 ~= tonumber(ARGV[1]) then return {'moved'} end
${refuseTaken("KEYS[2]")}
redis.call('SET', KEYS[1], ARGV[1])
${writePet("KEYS[2]", "KEYS[3]", "KEYS[4]", "ARGV[1]", "ARGV[2]")}
return {'created'}
`);

/**
 * An idempotent create in one round trip, at the id the store guessed: CLAIM and WRITE in one
 * script. The key's record decides first (a replay of its pet, or `reused`); else, when the
 * sequence stands just below the guess, takes it and writes the value, both index entries and the
 * record; else writes nothing and answers `moved`. KEYS: the record, the sequence, the value, the
 * index of all pets, the index of the pet's status. ARGV: fingerprint, now, the id, the value's
 * text, expires at, time to live (ms).
 */
export const WRITE_ONCE_AT = hashScript(`
${decideByRecord("KEYS[1]", "ARGV[1]", "ARGV[2]")}
${readSequence("KEYS[2]")}
if last + 1 ~= tonumber(ARGV[3]) then return {'moved'} end
${refuseTaken("KEYS[3]")}
redis.call('SET', KEYS[2], ARGV[3])
${writePet("KEYS[3]", "KEYS[4]", "KEYS[5]", "ARGV[3]", "ARGV[4]")}
${writeRecord("KEYS[1]", "ARGV[1]", "ARGV[3]", "ARGV[5]", "ARGV[6]")}
return {'created'}
`);

/**
 * Lua that moves the sequence at `sequence` up to `last` when it stands below (never back), or
 * answers `invalid` when it holds no integer.
 */
const raiseSequence = (sequence: string, last: string) => `${readSequence(sequence)}
if last < tonumber(${last}) then redis.call('SET', ${sequence}, ${last}) end`;

/**
 * Pets written at their own ids (an import), atomic: each pet whose value is absent gets its value
 * (Keyv's key and format) and both index entries, as a create writes them; a value already there
 * is left as it is (the caller compared it first); the sequence moves up to the highest id.
 * KEYS: the sequence, the index of all pets, the indexes of available, pending, sold, then each
 * pet's value. ARGV: the highest id, then for each pet its id, the KEYS number of its status's
 * index and its value's text.
 */
export const PUT_PETS = hashScript(`
${raiseSequence("KEYS[1]", "ARGV[1]")}
local written = 0
for i = 6, #KEYS do
  local at = 2 + (i - 6) * 3
  if redis.call('EXISTS', KEYS[i]) == 0 then
${writePet("KEYS[i]", "KEYS[2]", "KEYS[tonumber(ARGV[at + 1])]", "ARGV[at]", "ARGV[at + 2]")}
    written = written + 1
  end
end
return {'written', tostring(written)}
`);

/** Moves the sequence up (never back). KEYS: the sequence. ARGV: the last id taken at the least. */
export const RAISE_SEQUENCE = hashScript(`
${raiseSequence("KEYS[1]", "ARGV[1]")}
return {'raised'}
`);

/**
 * Key records written with their expiry (an import), atomic: a record already there with the same
 * text is left as it is, an expired or absent one written; when a live record of another text
 * holds a key, nothing is written and `conflict` answers its number (from 1).
 * KEYS: the records. ARGV: now, then for each record its text and time to live (ms).
 */
export const PUT_RECORDS = hashScript(`
local texts = {}
for i = 1, #KEYS do
  local rec = redis.call('GET', KEYS[i])
  local text = ARGV[i * 2]
  if rec and rec ~= text then
    local exp = tonumber(string.match(rec, ' (%S+)$') or '')
    if not exp or exp > tonumber(ARGV[1]) then return {'conflict', tostring(i)} end
  end
  texts[i] = rec
end
local written = 0
for i = 1, #KEYS do
  if texts[i] ~= ARGV[i * 2] then
    redis.call('SET', KEYS[i], ARGV[i * 2], 'PX', ARGV[i * 2 + 1])
    written = written + 1
  end
end
return {'written', tostring(written)}
`);

/** Sets the key to the text, or removes it for an empty text: an import's mark. KEYS: the mark. ARGV: the text. */
export const SET_MARK = hashScript(`
if ARGV[1] == '' then redis.call('DEL', KEYS[1]) else redis.call('SET', KEYS[1], ARGV[1]) end
return {'done'}
`);

/**
 * Removes pets an unfinished import wrote (its undo), atomic: their values and their entries in
 * every index. KEYS: the index of all pets, the indexes of available, pending, sold, then each pet's
 * value. ARGV: the pets' ids.
 */
export const REMOVE_PETS = hashScript(`
for i = 5, #KEYS do redis.call('DEL', KEYS[i]) end
for i = 1, 4 do redis.call('ZREM', KEYS[i], unpack(ARGV)) end
return {'removed', tostring(#ARGV)}
`);

/** Sets the sequence back to where it stood (an import's undo). KEYS: the sequence. ARGV: the last id taken. */
export const SET_SEQUENCE = hashScript(`
redis.call('SET', KEYS[1], ARGV[1])
return {'done'}
`);

/**
 * A lease of a caller's rate limit window (redis/rate.ts): grants up to the wanted count, never
 * past the limit, and sets the window's key to expire. KEYS: the window's count. ARGV: wanted,
 * limit, when the key may go (ms since the epoch). Answers the count granted and the window's count.
 */
export const RATE_LEASE = hashScript(`
local used = tonumber(redis.call('GET', KEYS[1]) or '0') or 0
local granted = math.min(tonumber(ARGV[1]), tonumber(ARGV[2]) - used)
if granted <= 0 then return {0, used} end
used = redis.call('INCRBY', KEYS[1], granted)
redis.call('PEXPIREAT', KEYS[1], ARGV[3])
return {granted, used}
`);
