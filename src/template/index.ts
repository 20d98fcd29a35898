/**
 * Templating: one expression language — Jinja2's expressions as ansible-core 2.19 evaluates them
 * (Liquid's filter syntax and tags accepted too) — rendering, conditions, static checks, and the
 * filter/test/lookup registry.
 */
export { Templar, templar, CONDITION_KEYS, type RenderOptions, type TemplarOptions, type TemplateHost } from './engine.js';
export { REGISTRY } from './registry.js';
export { isMap as isPlainMap } from './values.js';
export { markLazyView, UndefinedInputError } from './values.js';
