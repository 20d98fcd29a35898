/**
 * The helm adapter: one interface to the helm binary (`HelmCli`) plus the pure helpers the
 * `helm_release` module uses (values building and comparison, version-specific flags, JSON
 * parsing, rendered manifests, error trimming).
 */
export * from './cli.js';
export * from './errors.js';
export * from './manifests.js';
export * from './release.js';
export * from './values.js';
export * from './version.js';
