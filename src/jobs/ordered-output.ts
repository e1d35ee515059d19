import {
  closeSync,
  existsSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readSync,
  renameSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { dirname } from 'node:path';
import { readLinesSync } from './lines.js';
import { recordedMadeFrom } from './made-from.js';

/**
 * An append-only JSONL output whose final form is in input order, without holding records in
 * memory. While a job runs, each finished record is one `write` of one whole line at the end of
 * the file (a kill leaves at most a torn last line, which reopening cuts off). The only state in
 * memory is a small index: per record, its key, byte offset, byte length and input position.
 * `finalize` rewrites the file in input order by reading records back from their offsets.
 */
export class OrderedOutput<T extends object = object> {
  readonly path: string;
  private fd: number;
  private size: number;
  /** key → slot; a slot's offset, length and input position live in the typed arrays. */
  private readonly slots = new Map<string, number>();
  private offsets = new Float64Array(1024);
  private lengths = new Uint32Array(1024);
  private positions = new Float64Array(1024);
  /** Per slot, the row's `madeFrom` digest (64 bits) and flags: bit 0 has a digest, bit 1 discarded. */
  private digests = new BigUint64Array(1024);
  private flags = new Uint8Array(1024);
  private count = 0;
  /** Lines in the file that the index does not hold (corrupt or duplicate), dropped at finalize. */
  private dropped = 0;

  /**
   * Open (or create) `path`. Existing lines are scanned for their key only; a torn last line is
   * cut off, a line that does not parse is left out of the index, and of lines repeating a key
   * the last (the newest) is kept.
   * `check` sees each existing record (e.g. to refuse resuming from a file of another kind).
   */
  constructor(
    path: string,
    private readonly keyOf: (record: T) => string,
    options: { fresh?: boolean; check?: (record: unknown, line: number) => void } = {},
  ) {
    this.path = path;
    mkdirSync(dirname(path), { recursive: true });
    if (options.fresh || !existsSync(path)) writeFileSync(path, '');
    let end = 0;
    let missingNewline = false;
    for (const l of readLinesSync(path)) {
      if (l.text.trim() === '') {
        if (!l.partial) end = l.offset + l.length + 1;
        continue;
      }
      let rec: T;
      try {
        rec = JSON.parse(l.text) as T;
      } catch {
        // A torn last write is cut off; a corrupt line inside is left out of the index.
        if (!l.partial) {
          end = l.offset + l.length + 1;
          this.dropped++;
        }
        continue;
      }
      // A whole record without its newline (a file written by another tool) is kept.
      end = l.offset + l.length + 1;
      missingNewline = l.partial;
      options.check?.(rec, l.line);
      const key = this.keyOf(rec);
      // The file is append-only, so a later line of a key is the newer row: a row redone because
      // its input changed (jobs/made-from) follows the stale one until finalize drops that.
      if (this.slots.has(key)) this.discard(key);
      this.addSlot(key, l.offset, l.length, recordedMadeFrom(rec), isSimulatedRow(rec));
    }
    this.fd = openSync(path, 'r+');
    if (missingNewline) writeSync(this.fd, '\n', end - 1);
    else if (fstatSync(this.fd).size !== end) ftruncateSync(this.fd, end);
    this.size = end;
  }

  private addSlot(
    key: string,
    offset: number,
    length: number,
    madeFrom: string | undefined,
    simulated: boolean,
  ): void {
    if (this.count === this.offsets.length) {
      const grow = <A extends Float64Array | Uint32Array | BigUint64Array | Uint8Array>(
        a: A,
        make: (n: number) => A,
      ): A => {
        const b = make(a.length * 2);
        b.set(a as never);
        return b;
      };
      this.offsets = grow(this.offsets, (n) => new Float64Array(n));
      this.lengths = grow(this.lengths, (n) => new Uint32Array(n));
      this.positions = grow(this.positions, (n) => new Float64Array(n));
      this.digests = grow(this.digests, (n) => new BigUint64Array(n));
      this.flags = grow(this.flags, (n) => new Uint8Array(n));
    }
    this.offsets[this.count] = offset;
    this.lengths[this.count] = length;
    this.positions[this.count] = Number.POSITIVE_INFINITY;
    this.digests[this.count] = madeFrom === undefined ? 0n : BigInt(`0x${madeFrom}`);
    this.flags[this.count] = (madeFrom === undefined ? 0 : HAS_DIGEST) | (simulated ? SIMULATED : 0);
    this.slots.set(key, this.count++);
  }

  /**
   * The `madeFrom` digest the row of `key` records: a string, `null` when the row records none
   * (an output of an older stepwise), undefined when there is no row of that key.
   */
  madeFrom(key: string): string | null | undefined {
    const slot = this.slots.get(key);
    if (slot === undefined) return undefined;
    if (!(this.flags[slot] & HAS_DIGEST)) return null;
    return this.digests[slot].toString(16).padStart(16, '0');
  }

  /**
   * Forget the row of `key` (its input changed, so it is redone): it is no longer in the index,
   * a new row of that key may be appended, and finalize leaves the old line out of the file.
   */
  discard(key: string): void {
    const slot = this.slots.get(key);
    if (slot === undefined) return;
    this.slots.delete(key);
    this.flags[slot] |= DISCARDED;
    this.dropped++;
  }

  /** Records in the index. */
  get records(): number {
    return this.slots.size;
  }

  has(key: string): boolean {
    return this.slots.has(key);
  }

  /** Note that `key` is the item at input position `position` (what finalize orders by). */
  place(key: string, position: number): void {
    const slot = this.slots.get(key);
    if (slot !== undefined && this.positions[slot] === Number.POSITIVE_INFINITY)
      this.positions[slot] = position;
  }

  /** Read back one record by key (from disk). */
  get(key: string): T | undefined {
    const slot = this.slots.get(key);
    return slot === undefined ? undefined : (JSON.parse(this.readSlot(slot).toString('utf8')) as T);
  }

  private readSlot(slot: number): Buffer {
    const buf = Buffer.allocUnsafe(this.lengths[slot]);
    readSync(this.fd, buf, 0, buf.length, this.offsets[slot]);
    return buf;
  }

  /** Append one record as one line at input position `position` (flushed to the OS on return). */
  append(record: T, position: number): void {
    const key = this.keyOf(record);
    if (this.slots.has(key)) throw new Error(`internal: record "${key}" written twice`);
    const line = Buffer.from(`${JSON.stringify(record)}\n`, 'utf8');
    writeSync(this.fd, line, 0, line.length, this.size);
    this.addSlot(key, this.size, line.length - 1, recordedMadeFrom(record), isSimulatedRow(record));
    this.positions[this.count - 1] = position;
    this.size += line.length;
  }

  /**
   * Rewrite the file with records in input order (records never placed — keys no longer in
   * the input — follow, in file order), atomically via a temporary file. `each` sees every
   * record of the final file in order (for summaries). Skips the rewrite when the file is
   * already exactly that.
   *
   * When any row says `simulated: true` the world is simulated, and every row says so: rows
   * written before the simulation was detected (e.g. before a server's first marked reply
   * came back) get the field here.
   */
  finalize(each?: (record: T) => void): void {
    const order = Array.from({ length: this.count }, (_, i) => i).filter((i) => !(this.flags[i] & DISCARDED));
    const simulated = order.filter((i) => this.flags[i] & SIMULATED).length;
    const mark = simulated > 0 && simulated < order.length;
    order.sort((a, b) => this.positions[a] - this.positions[b] || this.offsets[a] - this.offsets[b]);
    let inPlace = this.dropped === 0 && !mark;
    let expect = 0;
    for (const slot of order) {
      if (this.offsets[slot] !== expect) inPlace = false;
      expect = this.offsets[slot] + this.lengths[slot] + 1;
    }
    if (expect !== this.size) inPlace = false;
    if (inPlace) {
      if (each) for (const slot of order) each(JSON.parse(this.readSlot(slot).toString('utf8')) as T);
      this.sync();
      return;
    }
    const tmp = `${this.path}.tmp-${process.pid}`;
    const out = openSync(tmp, 'w');
    try {
      const pending: Buffer[] = [];
      let pendingBytes = 0;
      const flush = () => {
        if (pendingBytes === 0) return;
        writeSync(out, Buffer.concat(pending, pendingBytes));
        pending.length = 0;
        pendingBytes = 0;
      };
      let pos = 0;
      for (const slot of order) {
        let buf = this.readSlot(slot);
        if (mark && !(this.flags[slot] & SIMULATED)) {
          buf = Buffer.from(JSON.stringify(markSimulated(JSON.parse(buf.toString('utf8')))), 'utf8');
          this.lengths[slot] = buf.length;
          this.flags[slot] |= SIMULATED;
        }
        if (each) each(JSON.parse(buf.toString('utf8')) as T);
        pending.push(buf, NEWLINE);
        pendingBytes += buf.length + 1;
        this.offsets[slot] = pos;
        pos += buf.length + 1;
        if (pendingBytes >= 1 << 20) flush();
      }
      flush();
      fsyncSync(out);
    } finally {
      closeSync(out);
    }
    closeSync(this.fd);
    renameSync(tmp, this.path);
    this.fd = openSync(this.path, 'r+');
    this.size = fstatSync(this.fd).size;
    this.dropped = 0;
  }

  private sync(): void {
    try {
      fsyncSync(this.fd);
    } catch {
      // fsync can fail on some filesystems; the data is already with the OS.
    }
  }

  close(): void {
    if (this.fd < 0) return;
    this.sync();
    closeSync(this.fd);
    this.fd = -1;
  }
}

const NEWLINE = Buffer.from('\n');
const HAS_DIGEST = 1;
const DISCARDED = 2;
const SIMULATED = 4;

function isSimulatedRow(row: unknown): boolean {
  return (row as { simulated?: unknown } | null)?.simulated === true;
}

/** `row` with `simulated: true`, placed before the trailing provenance fields (madeFrom, job). */
function markSimulated(row: Record<string, unknown>): Record<string, unknown> {
  const { madeFrom, job, ...rest } = row;
  return {
    ...rest,
    simulated: true,
    ...(madeFrom !== undefined ? { madeFrom } : {}),
    ...(job !== undefined ? { job } : {}),
  };
}
