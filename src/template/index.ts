/** Templating (Liquid): rendering, conditions, static checks and kplay's filters. */
export { Templar, templar, CONDITION_KEYS, type RenderOptions, type TemplarOptions } from './engine.js';
export { FILTERS, filterEntries, isPlainMap } from './filters.js';
