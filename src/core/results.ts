/**
 * Result schemas shared by several modules (declared once, like arguments).
 */
import { Type } from './args.js';

/** Drift of objects against their source, as `k8s_apply` and `helm_release` register it (`drift`). */
export const DriftResult = Type.Array(
  Type.Object({
    kind: Type.String(),
    apiVersion: Type.String(),
    name: Type.String(),
    namespace: Type.Optional(Type.String()),
    action: Type.String(),
    fields: Type.Array(Type.Unknown()),
    hidden: Type.Array(Type.Unknown()),
  }),
  {
    description:
      'Objects that differed from the source: `kind`, `apiVersion`, `name`, `namespace`, `action` (update/create/delete), `fields` (changed and added fields with their field manager) and `hidden` (what drift rules hid).',
  },
);
