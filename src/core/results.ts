/**
 * Result schemas shared by several modules (declared once, like arguments).
 */
import { Type } from './args.js';

/** One object and what is (or would be) done to it: the keys every per-object result starts with. */
const objectAction = () => ({
  kind: Type.String(),
  apiVersion: Type.String(),
  name: Type.String(),
  namespace: Type.Optional(Type.String()),
  action: Type.String(),
});

/** Drift of objects against their source, as `k8s_apply` and `helm_release` register it (`drift`). */
export const DriftResult = Type.Array(
  Type.Object({
    ...objectAction(),
    fields: Type.Array(Type.Unknown()),
    hidden: Type.Array(Type.Unknown()),
  }),
  {
    description:
      'Objects that differed from the source: `kind`, `apiVersion`, `name`, `namespace`, `action` (update/create/delete), `fields` (changed and added fields with their field manager) and `hidden` (what drift rules hid).',
  },
);

/**
 * What a task wrote, as `k8s_apply`, `k8s` and `helm_release` register it (`written`): every write
 * the cluster answered, also — above all — on a failed task, whose earlier writes are changes all
 * the same.
 */
export const WrittenResult = Type.Array(Type.Object(objectAction()), {
  description:
    'Every object the task wrote, in the order the cluster answered: `kind`, `apiVersion`, `name`, `namespace`, `action` (created/configured/deleted/…). On a failed task, what it changed before the failure (the task is then also `changed`).',
});

/** One entry of {@link WrittenResult}. */
export interface WrittenEntry {
  kind: string;
  apiVersion: string;
  name: string;
  namespace?: string;
  action: string;
}

/**
 * What a failed task's message adds about the writes made before the failure (`''` when none):
 * `; written before the failure (2): created ConfigMap web/a, configured Service web/b`, the
 * first 10 named.
 */
export function writtenNote(entries: readonly WrittenEntry[]): string {
  if (!entries.length) return '';
  const named = entries.slice(0, 10).map((e) => `${e.action} ${e.kind} ${e.namespace ? `${e.namespace}/` : ''}${e.name}`);
  const more = entries.length > named.length ? `, and ${entries.length - named.length} more` : '';
  return `; written before the failure (${entries.length}): ${named.join(', ')}${more}`;
}
