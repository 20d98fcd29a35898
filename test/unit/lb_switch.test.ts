/** Pure unit tests of the HAProxy runtime API parsers and helpers (no HAProxy needed). */
import { describe, expect, it } from 'vitest';
import { targetWeight } from '../../src/lb/haproxy.js';
import {
  adminStateOf,
  parseBackendList,
  parseEndpoint,
  parseServersState,
  parseStatCsv,
  RuntimeApiError,
  serverStateOf,
} from '../../src/lb/haproxy_runtime.js';
import { at } from '../helpers/cli.js';

describe('HAProxy runtime API parsers', () => {
  it('parses `show servers state` by header names, whatever their order', () => {
    const text = [
      '1',
      '# srv_name be_name srv_id srv_admin_state srv_uweight srv_op_state srv_iweight future_field',
      'web1 be_web 1 8 20 2 10 x',
      'web2 be_web 2 0 10 0 10 y',
      '',
    ].join('\n');
    const rows = parseServersState(text);
    expect(rows).toHaveLength(2);
    expect(serverStateOf(at(rows, 0))).toEqual({
      backend: 'be_web', server: 'web1', id: '1', admin: 'drain', adminFlags: 8, oper: 'up', weight: 20, initialWeight: 10,
    });
    expect(serverStateOf(at(rows, 1))).toMatchObject({ admin: 'ready', oper: 'down' });
  });

  it("turns HAProxy's error text into an error", () => {
    expect(() => parseServersState("Can't find backend.\n")).toThrow(RuntimeApiError);
    expect(() => parseServersState("Can't find backend.\n")).toThrow("Can't find backend.");
    expect(() => parseServersState('2\n# be_name\n')).toThrow('unsupported');
    expect(() => parseStatCsv('Unknown command.\n')).toThrow('Unknown command.');
  });

  it('parses `show stat` CSV by header names', () => {
    const rows = parseStatCsv('# svname,pxname,scur,status,\nweb1,be_web,3,DRAIN,\n');
    expect(rows).toEqual([{ svname: 'web1', pxname: 'be_web', scur: '3', status: 'DRAIN' }]);
    expect(parseBackendList('# name\nbe_a\nbe_b\n')).toEqual(['be_a', 'be_b']);
  });

  it('maps admin flags: maintenance wins over drain', () => {
    expect(adminStateOf(0)).toBe('ready');
    expect(adminStateOf(0x08)).toBe('drain');
    expect(adminStateOf(0x10)).toBe('drain');
    expect(adminStateOf(0x01)).toBe('maint');
    expect(adminStateOf(0x04)).toBe('maint');
    expect(adminStateOf(0x09)).toBe('maint');
    expect(adminStateOf(0x20)).toBe('maint');
  });

  it('parses socket addresses', () => {
    expect(parseEndpoint('/run/haproxy/admin.sock')).toEqual({ display: '/run/haproxy/admin.sock', path: '/run/haproxy/admin.sock' });
    expect(parseEndpoint('unix:///x.sock').path).toBe('/x.sock');
    expect(parseEndpoint('tcp://127.0.0.1:9999')).toMatchObject({ host: '127.0.0.1', port: 9999 });
    expect(parseEndpoint('ipv4@10.0.0.1:9999')).toMatchObject({ host: '10.0.0.1', port: 9999 });
    expect(parseEndpoint('tcp://[::1]:9999')).toMatchObject({ host: '::1', port: 9999 });
    expect(() => parseEndpoint('tcp://host')).toThrow('expected tcp://HOST:PORT');
    expect(() => parseEndpoint('tcp://h:70000')).toThrow('invalid port');
  });

  it('computes percentage weights like HAProxy (floor, capped at 256)', () => {
    expect(targetWeight(7, 10)).toBe(7);
    expect(targetWeight('50%', 10)).toBe(5);
    expect(targetWeight('50%', 1)).toBe(0);
    expect(targetWeight('100%', 3)).toBe(3);
    expect(targetWeight('1000%', 100)).toBe(256);
  });
});
