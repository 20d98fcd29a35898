/**
 * `kplay/sdk`, part 1 — defining a module: {@link defineModule}, the argument/result schema
 * helpers (`Type`, `Default`, `StringEnum`), the context and result types, argument checking,
 * errors, masking, YAML loading, and processes that never outlive kplay ({@link runProcess},
 * {@link tether}, an abortable {@link sleep}).
 */
export { defineModule, unreachableAfter, UnreachableError } from '../core/module.js';
export { withoutBom } from '../load/bom.js';
export { DriftResult, WrittenResult, writtenNote, type WrittenEntry } from '../core/results.js';
export { checkArgs } from '../plugins/check.js';
export { checkOptions as checkArgumentSpec } from '../playbook/argspec.js';
export { Default, StringEnum, Type, type Args, type Static, type TDefault, type TObject, type TSchema } from '../core/args.js';
export type { AnyModule, ClusterRef, DiffEntry, JsonSchema, ModuleAdapters, ModuleContext, ModuleDefinition, ModuleExample, ModuleLogger, ModuleResult, ModuleStatus, ResultData, RunInventory } from '../core/module.js';
export { errorMessage } from '../load/errors.js';
export { decryptFileData, loadYamlDoc } from '../load/yaml.js';
export { MASK } from '../core/mask.js';
export { spawnTethered, tether } from '../core/tether.js';
export { runProcess, type ProcessOptions, type ProcessResult } from '../core/process.js';
export { sleep } from '../core/sleep.js';
/** kplay's settings from the environment (`setting('helm')` is `$KPLAY_HELM` or `helm`), parsed and checked once. */
export { setting } from '../core/settings.js';
export type { SettingName } from '../core/settings-table.js';
export { UndefinedInputError } from '../template/index.js';
