/**
 * Derived secrets. Masking works on exact strings, so a value computed from a secret
 * (`{{ api_token | upcase }}`, `{{ password | split: '' | join: '-' }}`, a secret-derived object
 * name, a `set_fact` built from one) would be printed in clear. Every templated string of a
 * task's arguments that reads a secret — a variable whose name looks secret, or whose value is
 * or contains a registered secret — has its rendered result registered as a secret too, so every
 * channel (text, JSON events, diffs, errors, run records) masks it. Facts set from such values
 * carry the taint on: their values are registered, so templates reading them are tainted in turn.
 */
import { SECRET_NAME, type Masker } from '../report/mask.js';
import { Templar } from '../template/engine.js';
import { templar } from '../template/index.js';

type Obj = Record<string, unknown>;

/**
 * Register the string leaves of a derived value, except those that carry no secret and would
 * mask ordinary output everywhere: short strings, booleans, small numbers (`{{ password is defined }}`
 * renders `true`; `{{ token | size }}` renders `32`).
 */
function addDerived(value: unknown, masker: Masker, depth = 0): void {
  if (depth > 32) return;
  if (typeof value === 'string') {
    const s = value.trim();
    if (s.length >= 6 && !/^(true|false|null|none|yes|no)$/i.test(s) && !/^-?\d{1,9}(\.\d+)?$/.test(s)) masker.add(value);
  } else if (Array.isArray(value)) for (const v of value) addDerived(v, masker, depth + 1);
  else if (value !== null && typeof value === 'object') for (const v of Object.values(value as Obj)) addDerived(v, masker, depth + 1);
}

/** Whether template `tpl` reads a secret from `vars`: a variable path ending in a secret-looking name, or whose value is or holds a secret. */
function readsSecret(tpl: string, vars: Obj, masker: Masker): boolean {
  for (const segs of templar.variablePathsOf(tpl)) {
    if (segs.some((s) => typeof s === 'string' && SECRET_NAME.test(s))) return true;
    let value: unknown = vars;
    try {
      for (const s of segs) {
        if (value === null || typeof value !== 'object') {
          value = undefined;
          break;
        }
        value = (value as Record<string | number, unknown>)[s];
      }
    } catch {
      continue; // a lazily rendered variable that fails to render: not our concern here
    }
    if (masker.isSecret(value)) return true;
  }
  return false;
}

/**
 * Walk the arguments as written (`raw`) and as rendered (`rendered`) side by side; register the
 * rendered value of every templated string that reads a secret.
 */
export function taintRendered(raw: unknown, rendered: unknown, vars: Obj, masker: Masker, depth = 0): void {
  if (depth > 64) return;
  if (typeof raw === 'string') {
    if (!Templar.isTemplated(raw) || !readsSecret(raw, vars, masker)) return;
    // Register what each `{{ … }}` that reads a secret renders to, so only the derived part of a
    // longer string is masked ("token ********", not the whole line); with `{% … %}` tags the
    // parts cannot be told apart and the whole rendered value is registered.
    const outputs = raw.includes('{%') ? undefined : raw.match(/\{\{[\s\S]*?\}\}/g);
    if (!outputs) return addDerived(rendered, masker);
    for (const out of outputs) {
      if (!readsSecret(out, vars, masker)) continue;
      try {
        addDerived(templar.renderSync(out, vars), masker);
      } catch {
        addDerived(rendered, masker); // rendered as part of the whole string, so this is unexpected: stay safe
      }
    }
    return;
  }
  if (Array.isArray(raw)) {
    const r = Array.isArray(rendered) ? rendered : [];
    raw.forEach((x, i) => taintRendered(x, r[i], vars, masker, depth + 1));
    return;
  }
  if (raw !== null && typeof raw === 'object') {
    const r = rendered !== null && typeof rendered === 'object' && !Array.isArray(rendered) ? (rendered as Obj) : {};
    for (const [k, v] of Object.entries(raw as Obj)) taintRendered(v, r[k], vars, masker, depth + 1);
  }
}
