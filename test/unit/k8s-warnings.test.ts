// The apiserver's `Warning` headers as Node hands them over (repeated headers joined by ", ").
import { describe, expect, it } from 'vitest';
import { parseWarnings } from '../../src/k8s/warnings.js';

describe('parseWarnings', () => {
  it('reads the text of one warning, unescaping its quotes', () => {
    expect(parseWarnings('299 - "unknown field \\"spec.replica\\""')).toEqual(['unknown field "spec.replica"']);
  });

  it('splits warnings Node joined into one header, keeping commas inside a text', () => {
    const joined = '299 - "unknown field \\"spec.replica\\"", 299 - "policy/v1beta1 PodDisruptionBudget is deprecated in v1.21+, unavailable in v1.25+; use policy/v1 PodDisruptionBudget"';
    expect(parseWarnings(joined)).toEqual(['unknown field "spec.replica"', 'policy/v1beta1 PodDisruptionBudget is deprecated in v1.21+, unavailable in v1.25+; use policy/v1 PodDisruptionBudget']);
  });

  it('reads every value of a header given as a list, once each', () => {
    expect(parseWarnings(['299 - "a"', '299 - "b", 299 - "a"'])).toEqual(['a', 'b']);
  });

  it('keeps only miscellaneous persistent warnings (299) and ignores what is not a warning value', () => {
    expect(parseWarnings('199 - "stale"')).toEqual([]);
    expect(parseWarnings('no warning here')).toEqual([]);
    expect(parseWarnings('299 - ""')).toEqual([]);
    expect(parseWarnings(undefined)).toEqual([]);
  });

  it('takes the agent field as given (a host:port or a name, not only "-")', () => {
    expect(parseWarnings('299 kube-apiserver:6443 "deprecated"')).toEqual(['deprecated']);
  });
});
