/**
 * Pet ids in ascending order, 8 bytes each (a typed array that doubles as it fills), and whether
 * one is among them: what an export (the pets it holds) and an import's check (the pets a key may
 * name) keep of a store or a file without keeping its pets.
 */
export class IdList {
  private ids = new Float64Array(1024);
  /** How many ids are kept. */
  size = 0;

  /** Adds `id`, above every id added before. */
  push(id: number): void {
    if (this.size === this.ids.length) {
      const grown = new Float64Array(this.ids.length * 2);
      grown.set(this.ids);
      this.ids = grown;
    }
    this.ids[this.size++] = id;
  }

  /** The id at `index` (0 for the first added). */
  at(index: number): number | undefined {
    return index < this.size ? this.ids[index] : undefined;
  }

  /** True when `id` was added: a binary search. */
  has(id: number): boolean {
    let lo = 0;
    let hi = this.size;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((this.ids[mid] as number) < id) lo = mid + 1;
      else hi = mid;
    }
    return lo < this.size && this.ids[lo] === id;
  }
}
