import type { Chunk } from '../core/types.js';
import type { PublishedResult } from '../evaluate/published.js';
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
  /** The run's name (`--name`), null when it has none. */
  name: string | null;
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

/**
 * `GET /api/file?offset=&limit=[&id=][&text=][&<filter>=…]` of a `.jsonl` file: one page of its
 * records, of the whole file or of the records the filters and the text search keep.
 */
export interface JsonlPageResponse extends FileMeta {
  /** Records in the file (indexed so far: a file still being written grows). */
  total: number;
  /** Records the filters and text search keep (= total without any). */
  matched: number;
  /** Place of the page's first record among the matched ones (with `id`: that record's index in the file). */
  offset: number;
  records: unknown[];
  /** Index in the file of each record on the page. */
  indices: number[];
  /** 1-based line numbers on the page that are not JSON. */
  badLines: number[];
  /** The file is still being written (it grew since it was indexed, or ends in a partial line). */
  growing: boolean;
}

/** A filter a kind of file offers: a choice (each with the records it keeps over the whole file) or a number range. */
export type FilterDef =
  | {
      param: string;
      label: string;
      type: 'choice';
      choices: Array<{ value: string; label: string; count: number }>;
    }
  | { param: string; label: string; type: 'range'; min: number; max: number };

/** `GET /api/index?root=&path=[&wait=ms]`: how far the server has indexed a JSONL file, and its filters once it has. */
export interface IndexResponse extends ServedPath {
  kind: FileKind;
  ready: boolean;
  /** Bytes read and the file's size; records indexed so far. */
  bytes: number;
  size: number;
  records: number;
  /** Memory the index holds, in bytes. */
  indexBytes: number;
  /** Seconds the last (re)build or extension took, null while it runs. */
  seconds: number | null;
  filters: FilterDef[];
}

/** A paired difference: the mean of per-problem differences (B − A) and its 95% interval. */
export interface PairedDifference {
  n: number;
  mean: number | null;
  low: number | null;
  high: number | null;
  sd: number | null;
}

/** One side of a compared problem. */
export interface CompareSide {
  index: number;
  answer: string | null;
  /** null: not checked (no gold answer). */
  correct: boolean | null;
  tokens: number;
  resets: number;
  fallbacks: number;
  strategy: string | null;
}

/** `GET /api/compare?aroot=&apath=&broot=&bpath=[&offset=&limit=&only=]`: two search outputs over the same problems, paired by problem id. */
export interface CompareResponse {
  a: FileMeta & { total: number };
  b: FileMeta & { total: number };
  /** Problems in both files, and those in only one. */
  paired: number;
  onlyA: number;
  onlyB: number;
  /** Over the paired problems both sides checked: each side's correct count and the 2×2 table. */
  checked: number;
  correctA: number;
  correctB: number;
  bothCorrect: number;
  onlyACorrect: number;
  onlyBCorrect: number;
  neitherCorrect: number;
  /** B − A per problem: correctness (1/0) and tokens. */
  accuracy: PairedDifference;
  tokens: PairedDifference;
  /** The pairs the `only` filter keeps, and this page of them. */
  matched: number;
  offset: number;
  rows: Array<{ id: string | null; question: string | null; a: CompareSide; b: CompareSide }>;
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
  /** Published ProcessBench average F1 of real models (src/evaluate/published.ts), shown beside a report, never ranked with it. */
  processbenchPublished: readonly PublishedResult[];
  /** The address parameters a JSONL page passes on to /api/index and /api/page: `text` and every filter (FILTER_PARAMS). */
  queryParams: readonly string[];
  /** The file kinds `GET /api/summary` summarizes (SUMMARY_KINDS, src/server/summary.ts); the view asks only for these. */
  summaryKinds: readonly FileSummary['kind'][];
}

/** `POST /api/segment` */
export interface SegmentResponse {
  chunks: Chunk[];
}

/** `POST /api/verify` */
export type VerifyResponse = ReturnType<typeof explainEquivalence>;
