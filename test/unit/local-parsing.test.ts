// Pure logic behind the controller-local modules: Ansible's free-form parsing (split_args,
// parse_kv check_raw), Python's shlex.split, modes, Python's splitlines/timedelta/datetime text.
import { describe, expect, it } from 'vitest';
import { parseFreeForm, shlexSplit, splitArgs } from '../../src/local/kv.js';
import { octal, wantedMode } from '../../src/local/files.js';
import { delta, pyNow, splitLines } from '../../src/local/time.js';
import { expandUserVars } from '../../src/local/paths.js';

describe('free form (parse_kv with check_raw)', () => {
  it('takes only the command options out of the line, keeping the rest verbatim', () => {
    expect(parseFreeForm('ls -l chdir=/tmp creates=/tmp/x')).toEqual({ raw: 'ls -l', options: { chdir: '/tmp', creates: '/tmp/x' } });
    // an `=` that is not an option stays in the command
    expect(parseFreeForm('env FOO=bar printenv FOO')).toEqual({ raw: 'env FOO=bar printenv FOO', options: {} });
  });
  it('keeps quoted parts together and unquotes option values', () => {
    expect(parseFreeForm(`echo "a  b" 'c d' stdin="x y"`)).toEqual({ raw: `echo "a  b" 'c d'`, options: { stdin: 'x y' } });
  });
  it('an escaped = is part of the command', () => {
    expect(parseFreeForm('echo a\\=b')).toEqual({ raw: 'echo a=b', options: {} });
  });
  it('a line of options only has no command', () => {
    expect(parseFreeForm('creates=/x')).toEqual({ options: { creates: '/x' } });
  });
  it('splitArgs keeps Jinja blocks and newlines', () => {
    expect(splitArgs('a={{ x | default("y z") }} b')).toEqual(['a={{ x | default("y z") }}', 'b']);
    expect(splitArgs('one\ntwo three')).toEqual(['one\n', 'two', 'three']);
  });
  it('unbalanced quotes are an error (as ansible)', () => {
    expect(() => splitArgs('echo "oops')).toThrow(/unbalanced/);
  });
});

describe('shlexSplit (Python shlex.split, POSIX)', () => {
  it('splits on whitespace with quotes and escapes', () => {
    expect(shlexSplit(`echo "a  b" 'c d' plain\\ word`)).toEqual(['echo', 'a  b', 'c d', 'plain word']);
    expect(shlexSplit(`a"b c"d`)).toEqual(['ab cd']);
    expect(shlexSplit(`'it''s'`)).toEqual(['its']);
    expect(shlexSplit(`"say \\"hi\\" \\$x \\\\"`)).toEqual(['say "hi" \\$x \\']);
    expect(shlexSplit(`''`)).toEqual(['']);
    expect(shlexSplit('  ')).toEqual([]);
  });
  it('fails as Python does on an open quote or a trailing backslash', () => {
    expect(() => shlexSplit('echo "x')).toThrow('No closing quotation');
    expect(() => shlexSplit("echo 'x")).toThrow('No closing quotation');
    expect(() => shlexSplit('echo \\')).toThrow('No escaped character');
  });
});

describe('modes', () => {
  it('octal strings, numbers and symbolic modes as Ansible computes them', () => {
    expect(wantedMode('0644', 0o600, false)).toBe(0o644);
    expect(wantedMode('755', 0, true)).toBe(0o755);
    expect(wantedMode(420, 0, false)).toBe(0o644); // YAML 1.1 0644
    expect(wantedMode('u=rw,g=r,o=', 0o777, false)).toBe(0o640);
    expect(wantedMode('g+w,o+r', 0o600, false)).toBe(0o624);
    expect(wantedMode('a-x', 0o755, false)).toBe(0o644);
    expect(wantedMode('u+s', 0o755, false)).toBe(0o4755);
    expect(wantedMode('o=u', 0o750, false)).toBe(0o757);
  });
  it('X sets execute only for directories or files already executable by someone', () => {
    expect(wantedMode('u=rwX,g=rX,o=', 0o644, false)).toBe(0o640);
    expect(wantedMode('u=rwX,g=rX,o=', 0o644, true)).toBe(0o750);
    expect(wantedMode('u=rwX,g=rX,o=', 0o744, false)).toBe(0o750);
  });
  it('a bad mode is an error naming it', () => {
    expect(() => wantedMode('rw-r--r--', 0, false)).toThrow(/rw-r--r--/);
  });
  it('octal() prints four digits with special bits', () => {
    expect(octal(0o100644)).toBe('0644');
    expect(octal(0o4755)).toBe('04755');
  });
});

describe('Python renderings', () => {
  it('splitLines is str.splitlines()', () => {
    expect(splitLines('')).toEqual([]);
    expect(splitLines('a\nb\n')).toEqual(['a', 'b']);
    expect(splitLines('a\r\nb\rc\n\nd')).toEqual(['a', 'b', 'c', '', 'd']);
    expect(splitLines('\n')).toEqual(['']);
  });
  it('delta is str(timedelta)', () => {
    expect(delta({ us: 0, text: '' }, { us: 3748, text: '' })).toBe('0:00:00.003748');
    expect(delta({ us: 0, text: '' }, { us: 61_000_000, text: '' })).toBe('0:01:01');
    expect(delta({ us: 0, text: '' }, { us: 90_000_000_000 + 5, text: '' })).toBe('1 day, 1:00:00.000005');
  });
  it('pyNow is str(datetime.now()) in local time', () => {
    const t = pyNow();
    expect(t.text).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{6}$/);
    const d = new Date(Math.floor(t.us / 1000));
    expect(t.text.slice(11, 13)).toBe(String(d.getHours()).padStart(2, '0'));
  });
  it('expandUserVars is expanduser + expandvars (unset variables stay)', () => {
    expect(expandUserVars('~/x/$A/${B}/$UNSET_KPLAY', { A: 'a', B: 'b' })).toMatch(/^\/.+\/x\/a\/b\/\$UNSET_KPLAY$/);
    expect(expandUserVars('a~b')).toBe('a~b');
  });
});

describe('Python regular expressions (pyre)', () => {
  it('named groups and inline flags translate; $ matches before a final newline', async () => {
    const { pyRegex } = await import('../../src/local/pyre.js');
    expect(pyRegex('(?P<k>\\w+)=(?P=k)').exec('a=a')?.groups).toEqual({ k: 'a' });
    expect(pyRegex('(?i)^ABC$').test('abc\n')).toBe(true);
  });
  it('expand fills \\1, \\g<1>, \\g<name>, unmatched groups as empty, and rejects unknown groups', async () => {
    const { pyExpand, pyRegex } = await import('../../src/local/pyre.js');
    const m = pyRegex('^(?P<k>\\w+)=(\\d+)?(x)?').exec('key=12') as RegExpExecArray;
    expect(pyExpand(m, '\\g<k>:\\2\\g<2>[\\3]\\n\\q')).toBe('key:1212[]\n\\q');
    expect(() => pyExpand(m, '\\9')).toThrow('invalid group reference 9');
    expect(() => pyExpand(m, '\\g<nope>')).toThrow("unknown group name 'nope'");
  });
});
