/**
 * The apiserver's warnings (`Warning` response headers, RFC 7234 form `299 - "text"`): deprecated
 * APIs and fields (`spec.template.spec.nodeSelector[beta.kubernetes.io/os]: deprecated since
 * v1.14; …`), admission webhooks' warnings. kubectl prints them as `Warning: …`; k8s_apply reports
 * them on the task.
 */

const WARNING = /(\d{3})\s+(\S+)\s+"((?:[^"\\]|\\.)*)"/g;

/**
 * The texts of a response's `Warning` header(s). Node joins repeated headers with `, `, so the
 * values are read one `code agent "text"` at a time (a comma inside the quoted text is kept).
 * Only code 299 (miscellaneous persistent warning, all the apiserver sends) is kept.
 * @example parseWarnings('299 - "use \\"kubernetes.io/os\\" instead", 299 - "x"') // ['use "kubernetes.io/os" instead', 'x']
 */
export function parseWarnings(header: string | string[] | undefined): string[] {
  if (header === undefined) return [];
  const out: string[] = [];
  for (const h of Array.isArray(header) ? header : [header]) {
    for (const m of h.matchAll(WARNING)) {
      if (m[1] !== '299') continue;
      const text = (m[3] ?? '').replace(/\\(.)/g, '$1').trim();
      if (text && !out.includes(text)) out.push(text);
    }
  }
  return out;
}
