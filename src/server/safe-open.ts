import {
  closeSync,
  constants,
  createReadStream,
  fstatSync,
  openSync,
  type ReadStream,
  readlinkSync,
  readSync,
  realpathSync,
  statSync,
} from 'node:fs';
import { isAbsolute, resolve, sep } from 'node:path';

/**
 * Opening a file a request names inside a served folder: open first, then check what was opened,
 * then read from that same descriptor.
 *
 * Checking a path and then opening it is a race: whoever can write inside the served folder (a
 * job writing there, a shared folder) swaps a subfolder for a symlink to `/home/you` between the
 * check and the read, and the server reads a file outside the folder (86 of 96 tries did). Here
 * the path is opened once (non-blocking, so a FIFO cannot hang the open), the descriptor must be
 * a regular file, and the descriptor's own path — `/proc/self/fd/N` on Linux; elsewhere the real
 * path of the name, accepted only when it is the very file opened (same device and inode) — must
 * be the path asked, inside the folder: a symlink anywhere below the folder (even to a file inside
 * it) is refused, so what opens is exactly what a walk of the folder that follows no symlink finds
 * (the web view's listing). Every read afterwards goes to that descriptor, so a later swap
 * changes nothing that is read.
 *
 * What this does not stop: a hard link inside the folder to a file elsewhere is that file (Linux
 * refuses hard links to other users' files with protected_hardlinks on).
 */

/** A file opened inside a served folder; read it through these methods, then `close()` it. */
export interface ServedFile {
  /** The open descriptor; every read goes through it. */
  readonly fd: number;
  /** The real absolute path of the file that was opened. */
  readonly realPath: string;
  /** That path relative to the (real) served folder, `/`-separated: the path asked, normalised. */
  readonly realRel: string;
  readonly size: number;
  readonly mtimeMs: number;
  /** Bytes at `position` (at most `length`; fewer at the end of the file). */
  readAt(position: number, length: number): Buffer;
  /** The first `maxBytes` bytes (default: the size when opened) as UTF-8. */
  readText(maxBytes?: number): string;
  /** A stream of bytes [start, end] (inclusive, as `fs.createReadStream`); it leaves the descriptor open. */
  stream(start?: number, end?: number): ReadStream;
  close(): void;
}

/** Open flags: read only, never block on a FIFO, never become a controlling terminal. */
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (constants.O_NOCTTY ?? 0);

/** The path the kernel holds for an open descriptor (Linux), null where there is no /proc. */
function descriptorPath(fd: number): string | null {
  if (process.platform !== 'linux') return null;
  try {
    return readlinkSync(`/proc/self/fd/${fd}`);
  } catch {
    return null;
  }
}

/** `path` relative to `root` when it lies strictly inside it; null otherwise. */
function inside(root: string, path: string): string | null {
  const prefix = root.endsWith(sep) ? root : root + sep;
  if (!path.startsWith(prefix) || path.length === prefix.length) return null;
  const rel = path.slice(prefix.length);
  return rel.split(sep).some((p) => p === '..' || p === '.' || p === '') ? null : rel.split(sep).join('/');
}

/**
 * Open `rel` inside `root` for reading, or null when it is not a servable file there: `rel`
 * absolute, with NUL, not `isServable`; missing; not a regular file; or — checked on the open
 * descriptor, after any symlink or swap — not the file at `rel` below the real `root` with no
 * symlink on the way.
 * The caller must `close()` what it gets (or use {@link withServedFile}).
 */
export function openServedFile(
  root: string,
  rel: string,
  isServable: (relPath: string) => boolean,
): ServedFile | null {
  if (typeof rel !== 'string' || rel === '' || rel.includes('\0') || isAbsolute(rel)) return null;
  if (!isServable(rel)) return null;
  let realRoot: string;
  try {
    realRoot = realpathSync.native(root);
  } catch {
    return null;
  }
  const asked = resolve(realRoot, rel);
  // Cheap filter first: no need to open a device or a folder at all. The checks that count are
  // made on the descriptor below.
  try {
    if (!statSync(asked).isFile()) return null;
  } catch {
    return null;
  }
  let fd: number;
  try {
    fd = openSync(asked, OPEN_FLAGS);
  } catch {
    return null;
  }
  let keep = false;
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return null;
    let real = descriptorPath(fd);
    if (real === null) {
      // No /proc: the real path of the name counts only if it is still the file we hold.
      real = realpathSync.native(asked);
      const now = statSync(real);
      if (now.dev !== st.dev || now.ino !== st.ino) return null;
    }
    const realRel = inside(realRoot, real);
    if (
      realRel === null ||
      realRel !==
        rel
          .split('/')
          .filter((p) => p !== '')
          .join('/')
    )
      return null;
    keep = true;
    return servedFile(fd, real, realRel, st.size, st.mtimeMs);
  } catch {
    return null;
  } finally {
    if (!keep) closeSync(fd);
  }
}

function servedFile(
  fd: number,
  realPath: string,
  realRel: string,
  size: number,
  mtimeMs: number,
): ServedFile {
  let open = true;
  const readAt = (position: number, length: number): Buffer => {
    const buf = Buffer.allocUnsafe(Math.max(0, length));
    let got = 0;
    while (got < length) {
      const n = readSync(fd, buf, got, length - got, position + got);
      if (n === 0) break;
      got += n;
    }
    return buf.subarray(0, got);
  };
  return {
    fd,
    realPath,
    realRel,
    size,
    mtimeMs,
    readAt,
    readText: (maxBytes = size) => readAt(0, maxBytes).toString('utf8'),
    stream: (start = 0, end?: number) => createReadStream('', { fd, start, end, autoClose: false }),
    close: () => {
      if (open) closeSync(fd);
      open = false;
    },
  };
}

/** {@link openServedFile}, `use` the file, close it whatever happens; null when it does not open. */
export function withServedFile<T>(
  root: string,
  rel: string,
  isServable: (relPath: string) => boolean,
  use: (file: ServedFile) => T,
): T | null {
  const file = openServedFile(root, rel, isServable);
  if (!file) return null;
  try {
    return use(file);
  } finally {
    file.close();
  }
}
