import type { Chunk } from '../core/types.js';
import type { TraceStatus } from '../search/types.js';
import type { RunRecord, RunStatus } from '../store/runs.js';
import type { explainEquivalence } from '../verify/index.js';
import type { FileEntry, FileKind } from './files.js';
import type { FileSummary } from './summary.js';

/**
 * The JSON answers of the web server's API, one type per endpoint. The server builds each answer
 * against its type (`satisfies`) and the web view (web/app.js, type-checked) reads them through
 * the same types, so a change of an answer's shape fails the typecheck of whichever side is late.
 * The records inside output files are the files' own (untrusted) data: `unknown` here; the view
 * reads them as the types their writers declare and still checks every value it draws.
 */

/** Any 4xx/5xx answer. */
export interface ErrorResponse {
  error: string;
}

/** `GET /api/health` */
export interface HealthResponse {
  ok: true;
  version: string;
}

/** Where an output lies among the served folders: the folder's index (`--dir` order) and the path inside it. */
export interface ServedPath {
  root: number;
  path: string;
}

/** A run as the view gets it: the record, whether it ran on the simulated world, and where its output is served. */
export interface RunView extends RunRecord {
  simulated: boolean;
  /** Its output inside a served folder, null when it has none there. */
  outputFile: ServedPath | null;
  /** Its output is, or (a running job that has not written yet) will be, in a served folder. */
  served: boolean;
}

/** `GET /api/runs?scope=served|all&limit=` */
export interface RunsResponse {
  runs: RunView[];
  scope: 'all' | 'served';
  /** Runs in the store, and those of them writing into the served folders. */
  total: number;
  served: number;
}

/** `GET /api/runs/<id>` */
export interface RunResponse {
  run: RunView;
  output: (ServedPath & { kind: FileKind }) | null;
}

/** `GET /api/files` */
export interface FilesResponse {
  /**
   * The served folders by name, in `--dir` order: relative to the server's folder when inside
   * it, else the folder's own name (never an absolute path).
   */
  roots: string[];
  /** Exactly the files `GET /api/file` opens (paths relative to their folder). */
  files: FileEntry[];
}

/** A run that wrote a file, as `GET /api/file` lists it. */
export interface FileRun {
  id: string;
  command: string;
  status: RunStatus;
  simulated: boolean;
}

/** What `GET /api/file` says of every file: where it is, its kind, and the runs that wrote it. */
export interface FileMeta extends ServedPath {
  kind: FileKind;
  simulated: boolean;
  runs: FileRun[];
}

/** `GET /api/file` of a `.json` file: its whole content. */
export interface JsonFileResponse extends FileMeta {
  data: unknown;
}

/** `GET /api/file?offset=&limit=[&id=]` of a `.jsonl` file: one page of its records. */
export interface JsonlPageResponse extends FileMeta {
  /** Records in the file. */
  total: number;
  /** Index of the page's first record (with `id`: where that record was found). */
  offset: number;
  records: unknown[];
  /** 1-based line numbers on the page that are not JSON. */
  badLines: number[];
}

export type FileResponse = JsonFileResponse | JsonlPageResponse;

/** `GET /api/summary` of a `.jsonl` file: its whole-file summary, null for kinds without one. */
export interface SummaryResponse {
  kind: FileKind;
  summary: FileSummary | null;
}

/** `GET /api/legend`: the words the view shows for the code's own vocabularies. */
export interface LegendResponse {
  /** Every search-trace status (`TraceStatus`) and what it means, in legend order. */
  traceStatus: Readonly<Record<TraceStatus, string>>;
}

/** `POST /api/segment` */
export interface SegmentResponse {
  chunks: Chunk[];
}

/** `POST /api/verify` */
export type VerifyResponse = ReturnType<typeof explainEquivalence>;
