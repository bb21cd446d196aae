/**
 * `migrate --verify`: two stores compared as their clients see them, page by page (all pets, then
 * each status, 100 a page as the API's largest), and their live key records.
 */
import { MAX_LIMIT, PET_STATUSES, type Pet, type PetStatus } from "../lib/schemas.ts";
import type { GuardedTransfer } from "../lib/storage/guarded-transfer.ts";
import type { KeyRecord, PetStorage } from "../lib/storage/port.ts";
import { transferOf } from "./export.ts";

/** The stores differ: what and where. */
export class VerifyError extends Error {
  override name = "VerifyError";
}

/** The pages of `status` (all pets when undefined), as a client walks them. */
async function* pagesOf(
  store: GuardedTransfer,
  status: PetStatus | undefined,
  skipInvalid: boolean,
): AsyncGenerator<{ page: Pet[]; after: number }> {
  let after = 0;
  const onInvalid = skipInvalid ? () => {} : undefined;
  for (;;) {
    const page = await store.list({ status, after, limit: MAX_LIMIT, onInvalid });
    yield { page, after };
    const last = page[page.length - 1];
    if (page.length < MAX_LIMIT || last === undefined) return;
    after = last.id;
  }
}

/** Every live key record (of a pet `keep` keeps, when given), by scope and key, as text. */
async function keyTexts(store: GuardedTransfer, now: number, keep?: (petId: number) => boolean): Promise<string[]> {
  const texts: string[] = [];
  for await (const batch of store.transfer.keys(now)) {
    for (const { scope, key, fingerprint, petId, expiresAt } of batch as KeyRecord[]) {
      if (keep !== undefined && !keep(petId)) continue;
      texts.push(JSON.stringify([scope, key, fingerprint, petId, expiresAt]));
    }
  }
  return texts.sort();
}

/**
 * Compares `target` with `source`; rejects with a VerifyError at the first difference. With
 * `skipInvalid`, the source's records that cannot be read are left out, as the export left them.
 */
export async function verifyStores(
  sourceStorage: PetStorage,
  targetStorage: PetStorage,
  { skipInvalid = false }: { skipInvalid?: boolean } = {},
): Promise<{ pets: number; keys: number }> {
  const source = transferOf(sourceStorage);
  const target = transferOf(targetStorage);
  let pets = 0;
  // The source's pets that could be read: an export with skipped records left their keys out too.
  const readable = new Set<number>();
  for (const status of [undefined, ...PET_STATUSES]) {
    const theirs = pagesOf(target, status, false);
    for await (const { page: mine, after } of pagesOf(source, status, skipInvalid)) {
      const other = await theirs.next();
      if (other.done || JSON.stringify(mine) !== JSON.stringify(other.value.page)) {
        const what = status === undefined ? "pets" : `${status} pets`;
        throw new VerifyError(
          `the page of ${what} after id ${after} differs: ${mine.length} pets in the source, ${other.done ? 0 : other.value.page.length} in the target, not the same`,
        );
      }
      if (status === undefined) {
        pets += mine.length;
        if (skipInvalid) for (const pet of mine) readable.add(pet.id);
      }
    }
    if (!(await theirs.next()).done)
      throw new VerifyError(`the target has more pages of ${status ?? "all pets"} than the source`);
  }
  const now = Date.now();
  const keep = skipInvalid ? (petId: number) => readable.has(petId) : undefined;
  const [mine, theirs] = await Promise.all([keyTexts(source, now, keep), keyTexts(target, now)]);
  const differs = mine.findIndex((text, i) => theirs[i] !== text);
  if (differs >= 0 || mine.length !== theirs.length) {
    throw new VerifyError(
      `the key records differ: the source has ${mine.length} live ones, the target ${theirs.length}`,
    );
  }
  return { pets, keys: mine.length };
}
