/**
 * What kubernetes.core needs of the task's Python interpreter, where kplay's behaviour depends on it.
 *
 * kubernetes.core's `validate` option of `k8s`: the definition is checked with the Python library
 * `kubernetes-validate` on the task's Python interpreter (`ansible_python_interpreter`, else
 * `python3`), as the module itself does there — so the same schemas, the same messages, and the
 * same failure when the library is missing (`Failed to import the required Python library
 * (kubernetes-validate) …`). The check runs in a child process: the definition goes in on stdin,
 * the warnings and errors come back as JSON.
 */
import { runProcess } from '../core/process.js';

/** What validating one definition found, in kubernetes.core's words (`Kind name: …`). */
export interface KcoreValidation {
  /** The module fails with this (the library or the interpreter is missing). */
  fatal?: string;
  warnings: string[];
  errors: string[];
}

// kubernetes' DynamicClient.validate and Ansible's missing_required_lib, as kubernetes.core calls them
const SCRIPT = String.raw`
import json, platform, sys
try:
    import kubernetes_validate
    from kubernetes_validate.utils import VersionNotSupportedError
except ImportError:
    print(json.dumps({"fatal": "Failed to import the required Python library (kubernetes-validate) on %s's Python %s. Please read the module documentation and install it in the appropriate location. If the required library is installed, but Ansible is using the wrong Python interpreter, please consult the documentation on ansible_python_interpreter" % (platform.node(), sys.executable)}))
    sys.exit(0)
a = json.load(sys.stdin)
version = a["version"] or a["server"] or kubernetes_validate.latest_version()
warnings, errors = [], []
try:
    kubernetes_validate.validate(a["definition"], version, a["strict"])
except kubernetes_validate.utils.ValidationError as e:
    errors.append("resource definition validation error at %s: %s" % (".".join([str(item) for item in e.path]), e.message))
except VersionNotSupportedError:
    errors.append("Kubernetes version %s is not supported by kubernetes-validate" % version)
except kubernetes_validate.utils.SchemaNotFoundError as e:
    warnings.append("Could not find schema for object kind %s with API version %s in Kubernetes version %s (possibly Custom Resource?)" % (e.kind, e.api_version, e.version))
print(json.dumps({"warnings": warnings, "errors": errors}))
`;

/** The interpreter a task's module would run on: `ansible_python_interpreter` (a path or a name on PATH), else `python3`. */
export function taskPython(vars: Record<string, unknown>): string {
  const v = vars.ansible_python_interpreter;
  return typeof v === 'string' && v.trim() !== '' && !v.startsWith('auto') ? v.trim() : 'python3';
}

/**
 * Validate `definition` as kubernetes.core's `validate` does (`version` unset: the cluster's
 * `serverVersion`); each message is prefixed with `Kind name:` as kubernetes.core prefixes them.
 */
export async function kcoreValidate(definition: Record<string, unknown>, opts: { python: string; version?: string; strict: boolean; serverVersion: string; signal?: AbortSignal }): Promise<KcoreValidation> {
  const input = JSON.stringify({ definition, version: opts.version ?? null, server: opts.serverVersion || null, strict: opts.strict });
  const r = await runProcess(opts.python, ['-c', SCRIPT], { input, signal: opts.signal });
  if (r.error) return { fatal: `validate: cannot run the Python interpreter ${opts.python} (${r.error.code ?? r.error.message}): kubernetes.core validates with the kubernetes-validate library there; set ansible_python_interpreter to a Python that has it`, warnings: [], errors: [] };
  let out: unknown;
  try {
    out = JSON.parse(r.stdout.trim().split('\n').pop() ?? '');
  } catch {
    return { fatal: `validate: the Python interpreter ${opts.python} failed (exit ${String(r.code)}): ${r.stderr.trim().split('\n').slice(-3).join(' ')}`, warnings: [], errors: [] };
  }
  const o = typeof out === 'object' && out !== null ? (out as Record<string, unknown>) : {};
  if (typeof o.fatal === 'string') return { fatal: o.fatal, warnings: [], errors: [] };
  const meta = typeof definition.metadata === 'object' && definition.metadata !== null ? (definition.metadata as Record<string, unknown>) : {};
  const prefix = `${String(definition.kind)} ${String(meta.name)}: `;
  const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string').map((x) => prefix + x) : []);
  return { warnings: strings(o.warnings), errors: strings(o.errors) };
}

const REQUIRES = String.raw`
import json, platform, re, sys
lib, minimum, reason = sys.argv[1], sys.argv[2], sys.argv[3]
def nums(v):
    return tuple(int(x) for x in re.findall(r"\d+", v.split("+")[0])[:3])
try:
    mod = __import__(lib)
    ok = nums(getattr(mod, "__version__", "0")) >= nums(minimum)
except ImportError:
    ok = False
if not ok:
    print(json.dumps({"fatal": "Failed to import the required Python library (%s>=%s) on %s's Python %s. This is required %s. Please read the module documentation and install it in the appropriate location. If the required library is installed, but Ansible is using the wrong Python interpreter, please consult the documentation on ansible_python_interpreter" % (lib, minimum, platform.node(), sys.executable, reason)}))
else:
    print("{}")
`;

/**
 * kubernetes.core's `requires(lib, minimum, reason)` on the Python interpreter `python`: its
 * failure message when `lib` is missing there or older than `minimum`; undefined when it is there
 * (or the interpreter cannot be run: kplay itself needs no Python).
 */
export async function pythonRequires(python: string, lib: string, minimum: string, reason: string, signal?: AbortSignal): Promise<string | undefined> {
  const r = await runProcess(python, ['-c', REQUIRES, lib, minimum, reason], { signal });
  try {
    const o: unknown = JSON.parse(r.stdout.trim());
    return typeof o === 'object' && o !== null && typeof (o as Record<string, unknown>).fatal === 'string' ? ((o as Record<string, unknown>).fatal as string) : undefined;
  } catch {
    return undefined;
  }
}
