/**
 * Argument schemas shared by the kubernetes.core helm modules (declared once): the connection
 * arguments (`HELM_AUTH_ARG_SPEC` of the collection) and `set_values`.
 */
import { StringEnum, Type } from '../core/args.js';

/** kubernetes.core's helm connection arguments, each with its alias (Ansible: the alias wins when both are set). */
export const HelmAuthProps = {
  binary_path: Type.Optional(Type.String({ minLength: 1, description: 'The helm program. Default: `$KPLAY_HELM`, else `helm` on PATH.', 'x-kplay-example': '/usr/local/bin/helm' })),
  context: Type.Optional(Type.String({ minLength: 1, description: "kubeconfig context (alias `kube_context`; env `K8S_AUTH_CONTEXT`). Default: the inventory cluster's context, or the kubeconfig's current context when `kubeconfig` is given." })),
  kube_context: Type.Optional(Type.String({ minLength: 1, description: 'Alias of `context`.' })),
  kubeconfig: Type.Optional(
    Type.Union([Type.String({ minLength: 1 }), Type.Record(Type.String(), Type.Unknown())], {
      description: "kubeconfig file (relative to the playbook), or an inline kubeconfig (a map) — alias `kubeconfig_path`, env `K8S_AUTH_KUBECONFIG`. Default: the inventory cluster's kubeconfig.",
    }),
  ),
  kubeconfig_path: Type.Optional(Type.Union([Type.String({ minLength: 1 }), Type.Record(Type.String(), Type.Unknown())], { description: 'Alias of `kubeconfig`.' })),
  host: Type.Optional(Type.String({ minLength: 1, description: 'API server URL, overriding the kubeconfig\'s (env `K8S_AUTH_HOST`).' })),
  api_key: Type.Optional(Type.String({ minLength: 1, description: 'Bearer token for the API server (env `K8S_AUTH_API_KEY`); masked in all output, never on a command line.' })),
  validate_certs: Type.Optional(Type.Boolean({ description: "Verify the API server's certificate (alias `verify_ssl`; env `K8S_AUTH_VERIFY_SSL`). Default: true." })),
  verify_ssl: Type.Optional(Type.Boolean({ description: 'Alias of `validate_certs`.' })),
  ca_cert: Type.Optional(Type.String({ minLength: 1, description: 'CA certificate file of the API server (alias `ssl_ca_cert`; env `K8S_AUTH_SSL_CA_CERT`).' })),
  ssl_ca_cert: Type.Optional(Type.String({ minLength: 1, description: 'Alias of `ca_cert`.' })),
};

/** `set_values`: a list of `{value, value_type}` passed as helm's `--set*` flags. */
export const SetValuesProp = Type.Optional(
  Type.Array(
    Type.Object(
      {
        value: Type.String({ minLength: 1, description: '`key=value` as `helm --set` takes it (`image.tag=1.2`, `list[0]=a`).' }),
        value_type: Type.Optional(StringEnum(['raw', 'string', 'json', 'file', 'literal'], { description: 'Flag: `raw` → `--set` (default), else `--set-string`, `--set-json`, `--set-file`, `--set-literal`.' })),
      },
      { additionalProperties: false },
    ),
    { description: 'Values set as on the helm command line, applied after `values_files` and `release_values`; helm parses them.' },
  ),
);
