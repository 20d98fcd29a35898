// Intentional differences between kplay and ansible-core's templar in the differential expression
// suite: a case listed here may disagree without failing its group (it is counted apart in the
// summary). Each entry names the case by its group and exact text, and says WHY kplay differs on
// purpose. Keep this table short and honest: an entry whose case no longer exists, or which agrees
// again, fails the suite. Every disagreement is a defect until argued otherwise.
import type { ExprCase } from './cases.js';
import type { Outcome } from './compare.js';

/** One intentional difference. */
export interface IntentionalDifference {
  /** The case file's name without `.yml`, or `gen/<family>`. */
  group: string;
  /** The case's exact text. */
  text: string;
  /** Why kplay differs on purpose (what the user sees instead, and why that is better or necessary). */
  reason: string;
}

/** The table. */
export const INTENTIONAL: readonly IntentionalDifference[] = [
  {
    group: 'methods',
    text: '{{ l.count(3) }}',
    reason:
      "ansible-core 2.19 bug: its lazy list (_AnsibleLazyTemplateList in ansible/_internal/_templating/_lazy_containers.py) overrides index/remove/sort/__contains__/__eq__ to resolve its items first but not count(), so list.count compares the unresolved _LazyValue wrappers and gives 0 for a variable's list until something else resolves it (`(l.index(3), l.count(3))` gives [0, 1] there). kplay keeps Python's list.count: 1.",
  },
];

/** The reason a case may differ, or undefined when it must agree. */
export function intentionalReason(c: Pick<ExprCase, 'group' | 'text'>): string | undefined {
  return INTENTIONAL.find((d) => d.group === c.group && d.text === c.text)?.reason;
}

/**
 * Liquid's forms in a text: a property (`l.size`, `l.first`, `l['last']`) or the operator
 * `a contains b` (not Jinja's test `x is contains(y)`).
 */
const LIQUID_FORM = /\.(?:size|first|last)\b|\[\s*['"](?:size|first|last)['"]\s*\]|(?<!\bis\s+(?:not\s+)?)\bcontains\b(?!\s*\()/;

/**
 * The one intentional difference given by a rule rather than by case: Liquid's properties and
 * `contains`, kept for older kplay playbooks (README, "Intentional differences"). Where ansible-core
 * fails on a case using them, kplay may give Liquid's value (`[1, 2].size` is 2); where ansible-core
 * gives a value (a key named `size`, `l.size | default(0)`, `l.size is defined`), kplay must agree.
 */
export function liquidFallback(c: Pick<ExprCase, 'text'>, ansible: Outcome): string | undefined {
  if (ansible.ok || !LIQUID_FORM.test(c.text)) return undefined;
  return "Liquid's property or `contains` where Jinja has no value: kplay reads it as Liquid does, for older kplay playbooks";
}
