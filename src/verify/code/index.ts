export {
  definesFunction,
  extractCode,
  type FencedBlock,
  fencedBlocks,
  mbppEntryPoint,
  promptImports,
  truncateBodyCompletion,
} from './extract.js';
export { meanPassAtK, passAtK } from './passk.js';
export {
  DEFAULT_SANDBOX_LIMITS,
  defaultSandbox,
  pythonAsset,
  resolvePython,
  Sandbox,
  type SandboxEnforcement,
  type SandboxLimits,
  type SandboxOptions,
  type SandboxRequest,
  type SandboxResult,
  type SandboxStatus,
  type SandboxTest,
  type SandboxVerdict,
} from './sandbox.js';
export {
  type AssembledProgram,
  assembleProgram,
  type CodeCheck,
  type CodeCheckOptions,
  type CodeProblemLike,
  type CodeTask,
  type CodeTaskKind,
  checkCodeSolution,
  checkReferenceSolution,
  codeTaskOf,
  runCodeTask,
} from './tasks.js';
