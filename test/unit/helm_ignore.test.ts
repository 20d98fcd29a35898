// `.helmignore` as helm applies it: Go's filepath.Match (the cases of Go's own match_test.go), and
// helm's rule semantics (first deciding rule wins, negation, directory rules, rooted and base-name
// patterns). The rule cases were checked against helm 4.1.4 (`helm package`); the integration
// suite (helm_chart_shapes) compares the whole file list with helm's on a chart with every shape.
import { describe, expect, it } from 'vitest';
import { goGlobMatch, isIgnored, parseHelmIgnore, HelmIgnoreError } from '../../src/helm/ignore.js';

describe("Go's filepath.Match", () => {
  const cases: [string, string, boolean | 'bad'][] = [
    ['abc', 'abc', true],
    ['*', 'abc', true],
    ['*c', 'abc', true],
    ['a*', 'a', true],
    ['a*', 'abc', true],
    ['a*', 'ab/c', false],
    ['a*/b', 'abc/b', true],
    ['a*/b', 'a/c/b', false],
    ['a*b*c*d*e*/f', 'axbxcxdxe/f', true],
    ['a*b*c*d*e*/f', 'axbxcxdxexxx/f', true],
    ['a*b*c*d*e*/f', 'axbxcxdxe/xxx/f', false],
    ['a*b*c*d*e*/f', 'axbxcxdxexxx/fff', false],
    ['a*b?c*x', 'abxbbxdbxebxczzx', true],
    ['a*b?c*x', 'abxbbxdbxebxczzy', false],
    ['ab[c]', 'abc', true],
    ['ab[b-d]', 'abc', true],
    ['ab[e-g]', 'abc', false],
    ['ab[^c]', 'abc', false],
    ['ab[^b-d]', 'abc', false],
    ['ab[^e-g]', 'abc', true],
    ['a\\*b', 'a*b', true],
    ['a\\*b', 'ab', false],
    ['a?b', 'a☺b', true],
    ['a[^a]b', 'a☺b', true],
    ['a???b', 'a☺b', false],
    ['a[^a][^a][^a]b', 'a☺b', false],
    ['[a-ζ]*', 'α', true],
    ['*[a-ζ]', 'A', false],
    ['a?b', 'a/b', false],
    ['a*b', 'a/b', false],
    ['[\\]a]', ']', true],
    ['[\\-]', '-', true],
    ['[x\\-]', 'x', true],
    ['[x\\-]', '-', true],
    ['[x\\-]', 'z', false],
    ['[\\-x]', 'x', true],
    ['[\\-x]', '-', true],
    ['[\\-x]', 'a', false],
    ['[]a]', ']', 'bad'],
    ['[-]', '-', 'bad'],
    ['[x-]', 'x', 'bad'],
    ['[-x]', 'x', 'bad'],
    ['\\', 'a', 'bad'],
    ['[a-b-c]', 'a', 'bad'],
    ['[', 'a', 'bad'],
    ['[^', 'a', 'bad'],
    ['[^bc', 'a', 'bad'],
    ['a[', 'a', 'bad'],
    ['a[', 'ab', 'bad'],
    ['a[', 'x', 'bad'],
    ['a/b[', 'x', 'bad'],
    ['*x', 'xxx', true],
  ];
  it.each(cases)('Match(%j, %j) is %j', (pattern, name, want) => {
    if (want === 'bad') expect(() => goGlobMatch(pattern, name)).toThrow(/syntax error in pattern/);
    else expect(goGlobMatch(pattern, name)).toBe(want);
  });
});

describe('.helmignore rules', () => {
  /** The chart of the cases: [path, isDir]. */
  const tree: [string, boolean][] = [
    ['Chart.yaml', false],
    ['values.yaml', false],
    ['README.md', false],
    ['a.txt', false],
    ['docs', true],
    ['docs/x.md', false],
    ['sub', true],
    ['sub/docs', true],
    ['sub/docs/y.md', false],
    ['sub/z.txt', false],
    ['templates', true],
    ['templates/a.yaml', false],
    ['templates/.dot.yaml', false],
    ['templates/.hidden', true],
    ['templates/tests', true],
    ['templates/tests/t.yaml', false],
  ];
  /** What helm loads: a path is loaded when neither it nor a parent directory is ignored. */
  const loaded = (text: string): string[] => {
    const rules = parseHelmIgnore(text);
    const skipped = new Set<string>();
    const out: string[] = [];
    for (const [p, dir] of tree) {
      if ([...skipped].some((d) => p.startsWith(`${d}/`))) continue;
      if (isIgnored(rules, p, dir)) {
        if (dir) skipped.add(p);
        continue;
      }
      if (!dir) out.push(p);
    }
    return out.sort();
  };
  const everything = ['Chart.yaml', 'README.md', 'a.txt', 'docs/x.md', 'sub/docs/y.md', 'sub/z.txt', 'templates/a.yaml', 'templates/tests/t.yaml', 'values.yaml'];
  const without = (...gone: string[]): string[] => everything.filter((p) => !gone.includes(p));
  const cases: [string, string[]][] = [
    ['', everything], // and helm's own rule: no dotfiles directly in templates/
    ['templates/tests/\n', without('templates/tests/t.yaml')],
    ['tests\n', without('templates/tests/t.yaml')], // no slash: the base name, at any depth
    ['templates/*/\n', without('templates/tests/t.yaml')],
    ['/docs\n', without('docs/x.md')], // rooted: only the top-level docs
    ['docs/\n', without('docs/x.md', 'sub/docs/y.md')],
    ['/*.txt\n', without('a.txt')],
    ['*.txt\n', without('a.txt', 'sub/z.txt')],
    ['  *.txt   \n# a comment\n\n', without('a.txt', 'sub/z.txt')],
    ['*.md # not a comment\n', everything],
    ['*.md\r\n', without('README.md', 'docs/x.md', 'sub/docs/y.md')],
    // helm's negation: a path a `!rule` does not match is ignored at once (`!Chart.yaml` alone keeps only Chart.yaml)
    ['!Chart.yaml\n', ['Chart.yaml']],
    ['!Chart.yaml\n!values.yaml\n*\n', []],
    ['*.md\n!README.md\n', []],
  ];
  it.each(cases)('%j loads the files helm loads', (text, want) => {
    expect(loaded(text)).toEqual(want);
  });

  it('refuses what helm refuses, naming the line', () => {
    expect(() => parseHelmIgnore('# ok\ntemplates/**/x\n')).toThrow(HelmIgnoreError);
    expect(() => parseHelmIgnore('# ok\ntemplates/**/x\n')).toThrow(/line 2: double-star \(\*\*\) syntax is not supported/);
    expect(() => parseHelmIgnore('a[\n')).toThrow(/line 1: syntax error in pattern/);
  });

  it('never ignores the chart root', () => {
    expect(isIgnored(parseHelmIgnore('*\n'), '', true)).toBe(false);
    expect(isIgnored(parseHelmIgnore('*\n'), '.', true)).toBe(false);
  });
});
