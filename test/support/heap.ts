import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

// A full collection on demand, so heap sizes compare live data, not garbage awaiting collection.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

/** Bytes of live JavaScript heap after two full collections. */
export function liveHeapBytes(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}
