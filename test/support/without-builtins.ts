/**
 * Run first (`node --import tsx --import ./without-builtins.ts`): hides `process.getBuiltinModule`,
 * as a Node before 22.3 lacks it and a browser has no `process` at all, so the code under test takes
 * its other path.
 */
delete (process as { getBuiltinModule?: unknown }).getBuiltinModule;
