import { randomInt } from "node:crypto";

/**
 * The semantic side's vectors held in the store's own process (docs/search.md "Vector cache"): one matrix per
 * (index, name), stored dimension by dimension, so an exact scan multiplies only the query's non-zero dimensions
 * (a short query embedded by the built-in embedder has ~13 of 128) over contiguous arrays. Scores are exact cosines.
 *
 * Coherence: every write to an index sets a new random `generation` in the database, in the same transaction. An
 * entry is used only while the generation it was built or updated at equals the one a query reads, so a write by
 * another node (PostgreSQL), a rolled-back write or a deleted index makes the entry reload rather than answer stale.
 * Writes made through this store update the entries they touch in place (`changed`), so they cost no reload.
 *
 * One instance per store (it lives in the store's thread with the connection); nothing here is module state.
 */

/** Rows a cache entry is loaded from: the store-local key (rowid, seq) and the float32 embedding. */
export type VectorRow = [key: number, embedding: Uint8Array];

export interface ScoredKey {
  key: number;
  value: number;
}

/** A new generation for a write: random, so a rolled-back value can never come back and look current. */
export const newGeneration = (): number => randomInt(1, 2 ** 47);

const asFloats = (bytes: Uint8Array): Float32Array =>
  bytes.byteOffset % 4 === 0
    ? new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4)
    : new Float32Array(bytes.slice().buffer);

class Matrix {
  /** columns[d][slot]: dimension d of the vector in `slot`. */
  private columns: Float32Array[];
  private norms: Float32Array;
  private keys: Float64Array;
  private readonly slotOf = new Map<number, number>();
  private readonly free: number[] = [];
  private used = 0;

  constructor(
    readonly dimension: number,
    capacity: number,
    public generation: number,
  ) {
    const c = Math.max(16, capacity);
    this.columns = Array.from({ length: dimension }, () => new Float32Array(c));
    this.norms = new Float32Array(c);
    this.keys = new Float64Array(c).fill(-1);
  }

  get bytes(): number {
    return this.keys.length * (this.dimension + 3) * 4;
  }

  get size(): number {
    return this.slotOf.size;
  }

  set(key: number, vector: Float32Array): void {
    let slot = this.slotOf.get(key);
    if (slot === undefined) {
      slot = this.free.pop() ?? this.used++;
      if (slot >= this.keys.length) this.grow();
      this.slotOf.set(key, slot);
      this.keys[slot] = key;
    }
    let norm = 0;
    for (let d = 0; d < this.dimension; d++) {
      const x = vector[d] ?? 0;
      this.columns[d]![slot] = x;
      norm += x * x;
    }
    this.norms[slot] = Math.sqrt(norm);
  }

  remove(key: number): void {
    const slot = this.slotOf.get(key);
    if (slot === undefined) return;
    this.slotOf.delete(key);
    this.keys[slot] = -1;
    this.norms[slot] = 0;
    this.free.push(slot);
  }

  private grow(): void {
    const c = this.keys.length * 2;
    this.columns = this.columns.map((old) => {
      const next = new Float32Array(c);
      next.set(old);
      return next;
    });
    const norms = new Float32Array(c);
    norms.set(this.norms);
    this.norms = norms;
    const keys = new Float64Array(c).fill(-1);
    keys.set(this.keys);
    this.keys = keys;
  }

  /** Dot products of the query with every slot (or the given slots), over the query's non-zero dimensions only. */
  /** Reused by every scan (each consumes it before it returns): a query allocates nothing per document. */
  private scratch = new Float64Array(0);

  private dots(query: Float32Array, slots: Int32Array | undefined): { dots: Float64Array; queryNorm: number } {
    const n = slots ? slots.length : this.used;
    if (this.scratch.length < n) this.scratch = new Float64Array(Math.max(n, this.scratch.length * 2));
    const dots = this.scratch.subarray(0, n);
    dots.fill(0);
    let queryNorm = 0;
    for (let d = 0; d < this.dimension; d++) {
      const w = query[d] ?? 0;
      if (w === 0) continue;
      queryNorm += w * w;
      const column = this.columns[d]!;
      if (slots) for (let i = 0; i < n; i++) dots[i]! += w * column[slots[i]!]!;
      else for (let s = 0; s < n; s++) dots[s]! += w * column[s]!;
    }
    return { dots, queryNorm: Math.sqrt(queryNorm) };
  }

  /** Cosine of the query with the vector in `slot`, from its dot product; 0 for an empty vector (as sqlite-vec). */
  private cosine(dot: number, queryNorm: number, slot: number): number {
    const norm = this.norms[slot]!;
    return norm > 0 && queryNorm > 0 ? dot / (norm * queryNorm) : 0;
  }

  /** The `k` most similar vectors, best first; only the `keys` given when they are (a filter's matches). */
  nearest(query: Float32Array, k: number, keys?: Iterable<number>): ScoredKey[] {
    const slots = keys ? this.slotsOf(keys) : undefined;
    const { dots, queryNorm } = this.dots(query, slots);
    const best = new TopK(k);
    for (let i = 0; i < dots.length; i++) {
      const slot = slots ? slots[i]! : i;
      const key = this.keys[slot]!;
      if (key < 0) continue;
      best.offer(key, this.cosine(dots[i]!, queryNorm, slot));
    }
    return best.sorted();
  }

  /** Cosines of the given keys (those this entry holds). */
  similarities(query: Float32Array, keys: Iterable<number>): ScoredKey[] {
    const slots = this.slotsOf(keys);
    const { dots, queryNorm } = this.dots(query, slots);
    return Array.from(slots, (slot, i) => ({ key: this.keys[slot]!, value: this.cosine(dots[i]!, queryNorm, slot) }));
  }

  private slotsOf(keys: Iterable<number>): Int32Array {
    const out: number[] = [];
    for (const key of keys) {
      const slot = this.slotOf.get(key);
      if (slot !== undefined) out.push(slot);
    }
    return Int32Array.from(out);
  }
}

/** A bounded selection of the best `k` by value (a binary min-heap: the root is the worst kept). */
class TopK {
  private readonly values: number[] = [];
  private readonly keys: number[] = [];
  constructor(private readonly k: number) {}

  offer(key: number, value: number): void {
    const { values, keys } = this;
    if (values.length < this.k) {
      values.push(value);
      keys.push(key);
      for (let i = values.length - 1; i > 0; ) {
        const parent = (i - 1) >> 1;
        if (values[parent]! <= values[i]!) break;
        this.swap(i, parent);
        i = parent;
      }
      return;
    }
    if (this.k === 0 || value <= values[0]!) return;
    values[0] = value;
    keys[0] = key;
    for (let i = 0; ; ) {
      const l = 2 * i + 1;
      const r = l + 1;
      let least = i;
      if (l < values.length && values[l]! < values[least]!) least = l;
      if (r < values.length && values[r]! < values[least]!) least = r;
      if (least === i) break;
      this.swap(i, least);
      i = least;
    }
  }

  private swap(a: number, b: number): void {
    const { values, keys } = this;
    [values[a], values[b]] = [values[b]!, values[a]!];
    [keys[a], keys[b]] = [keys[b]!, keys[a]!];
  }

  sorted(): ScoredKey[] {
    return this.keys.map((key, i) => ({ key, value: this.values[i]! })).sort((a, b) => b.value - a.value || a.key - b.key);
  }
}

/** What a write through this store changed in an index; applied once the write's SQL has run, in its transaction. */
export interface VectorChanges {
  /** The name written to; undefined: the whole index was emptied (a reset without a name). */
  namespace?: string;
  set?: Iterable<[key: number, vector: Float32Array]>;
  removed?: Iterable<number>;
  /** Every vector of the name was deleted. */
  cleared?: boolean;
}

export class VectorCache {
  /** Key `${indexId}\0${namespace}`; Map order is least recently used first. */
  private readonly entries = new Map<string, { indexId: string; matrix: Matrix }>();

  /** `maxBytes`: the memory all entries may take; a name larger than that is scanned by the store instead. */
  constructor(private readonly maxBytes: number) {}

  /** The entry of a name if it is current at `generation`; a stale one is dropped. */
  get(indexId: string, namespace: string, generation: number): Matrix | undefined {
    const id = `${indexId}\0${namespace}`;
    const entry = this.entries.get(id);
    if (!entry) return undefined;
    this.entries.delete(id);
    if (entry.matrix.generation !== generation) return undefined;
    this.entries.set(id, entry);
    return entry.matrix;
  }

  /** Whether `count` vectors of `dimension` fit in the budget at all (else the store scans in the database). */
  fits(count: number, dimension: number): boolean {
    return Math.max(16, count) * (dimension + 3) * 4 <= this.maxBytes;
  }

  /**
   * Builds a name's entry from all its rows (`count` of them, read at `generation` or later), evicting others to
   * make room. The caller checked `fits` first; every row is consumed.
   */
  load(
    indexId: string,
    namespace: string,
    generation: number,
    dimension: number,
    count: number,
    rows: Iterable<VectorRow>,
  ): Matrix {
    this.evictFor(Math.max(16, count) * (dimension + 3) * 4);
    const matrix = new Matrix(dimension, count, generation);
    for (const [key, bytes] of rows) matrix.set(key, asFloats(bytes));
    this.entries.set(`${indexId}\0${namespace}`, { indexId, matrix });
    return matrix;
  }

  /**
   * A write moved the index from generation `before` to `after`. Entries of the index that were current at `before`
   * take the write's changes and become current at `after`; any other entry of the index is dropped.
   */
  changed(indexId: string, before: number | undefined, after: number, changes: VectorChanges): void {
    for (const [id, entry] of this.entries) {
      if (entry.indexId !== indexId) continue;
      const touched = changes.namespace === undefined || id === `${indexId}\0${changes.namespace}`;
      if (entry.matrix.generation !== before || (touched && (changes.namespace === undefined || changes.cleared))) {
        this.entries.delete(id);
        continue;
      }
      if (touched && !this.apply(entry.matrix, changes)) {
        this.entries.delete(id);
        continue;
      }
      entry.matrix.generation = after;
    }
    this.evictFor(0);
  }

  /** False when the changes do not fit the entry (another dimension): it must be dropped. */
  private apply(matrix: Matrix, changes: VectorChanges): boolean {
    matrix.generation = -1; // not current while half-applied
    for (const key of changes.removed ?? []) matrix.remove(key);
    for (const [key, vector] of changes.set ?? []) {
      if (vector.length !== matrix.dimension) return false;
      matrix.set(key, vector);
    }
    return true;
  }

  private evictFor(needed: number): void {
    let total = needed;
    for (const { matrix } of this.entries.values()) total += matrix.bytes;
    for (const [id, { matrix }] of this.entries) {
      if (total <= this.maxBytes) break;
      total -= matrix.bytes;
      this.entries.delete(id);
    }
  }
}

export type { Matrix as VectorMatrix };

/** Memory for cached vectors per store: 100,000 documents of the built-in embedder's 128 dimensions take ~53 MB. */
export const VECTOR_CACHE_BYTES = 1024 * 1024 * 1024;
