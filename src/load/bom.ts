/**
 * Files saved on Windows start with a UTF-8 byte-order mark (U+FEFF). Ansible's YAML reader
 * (PyYAML, libyaml) skips one at the start of a stream; kplay's parsers drop it the same way —
 * every YAML, JSON and INI text a user gives (playbooks, roles, vars files, inventories,
 * manifests, values files, kubeconfigs, rendered templates) goes through {@link withoutBom} before
 * it is parsed. Text that is not parsed keeps it, as in Ansible (a `template` or `lookup('file')`
 * result starts with U+FEFF there too).
 */

/** `text` without a leading byte-order mark (U+FEFF); the same text when it has none. */
export function withoutBom(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}
