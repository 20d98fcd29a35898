/**
 * JSON Schema (draft-07) of an inventory file. This constant is the source of truth;
 * `schemas/inventory.schema.json` is its published copy (a unit test keeps them identical).
 */
import type { JsonSchema } from '../core/module.js';

/** Pattern every group and cluster name must match. */
export const NAME_PATTERN = '^[A-Za-z0-9_.-]+$';

/** The inventory file schema (`$id` https://kplay.dev/schemas/inventory.schema.json). */
export const inventorySchema: JsonSchema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  $id: 'https://kplay.dev/schemas/inventory.schema.json',
  title: 'kplay inventory',
  description:
    'The Kubernetes clusters kplay manages, organised in groups: kplay\u2019s format (`clusters:`) or Ansible\u2019s YAML ' +
    'inventory format (`hosts:`), mixed freely. The top level holds groups, usually only `all`; any other top-level ' +
    'group is a child of `all`. Next to the file (or in a directory inventory) optional `group_vars/<group>.yml`, ' +
    '`host_vars/<host>.yml` and `cluster_vars/<cluster>.yml` files.',
  type: 'object',
  properties: {
    all: {
      $ref: '#/definitions/group',
      description: 'The root group: every cluster belongs to it.',
    },
  },
  propertyNames: { pattern: NAME_PATTERN },
  additionalProperties: { $ref: '#/definitions/group' },
  minProperties: 1,
  definitions: {
    vars: {
      type: ['object', 'null'],
      description:
        'Variables (name → value). Values may contain templates; they are rendered when used. Values tagged ' +
        '`!secret`, and values of keys that look secret (password, token, …), are masked in all output.',
    },
    group: {
      type: ['object', 'null'],
      description: 'A group of clusters. An empty entry is an empty group.',
      properties: {
        vars: {
          $ref: '#/definitions/vars',
          description:
            'Variables for every cluster in this group (and its child groups). Deeper groups override their parents; ' +
            'groups at the same depth are applied in name order.',
        },
        clusters: {
          type: ['object', 'null'],
          description:
            'Clusters directly in this group (name → cluster entry). A cluster may be listed in several groups; ' +
            'repeat it with no keys or with the same keys.',
          propertyNames: { pattern: NAME_PATTERN },
          additionalProperties: { $ref: '#/definitions/cluster' },
        },
        hosts: {
          type: ['object', 'null', 'string'],
          description:
            'Ansible hosts directly in this group (name → map of host vars, or nothing; a single name may be given as a ' +
            'string). Names may hold ranges (`web[01:10]`) and a `:port` (sets `ansible_port`). A host connects through ' +
            'the var `kplay_context` (and `kplay_kubeconfig`), else `$K8S_AUTH_CONTEXT`, else the kubeconfig\u2019s current ' +
            'context. A host listed again merges its vars (the later value wins).',
          additionalProperties: { $ref: '#/definitions/host' },
        },
        children: {
          type: ['object', 'null', 'string'],
          description: 'Child groups (name → group; a single name may be given as a string). A child\u2019s clusters are also members of this group.',
          propertyNames: { pattern: NAME_PATTERN },
          additionalProperties: { $ref: '#/definitions/group' },
        },
      },
      additionalProperties: false,
    },
    host: {
      type: ['object', 'null'],
      description: 'An Ansible host: its host vars (name → value), or nothing.',
    },
    cluster: {
      type: ['object', 'null'],
      description: 'One Kubernetes cluster (a kubeconfig context). An empty entry means all defaults.',
      properties: {
        context: {
          type: 'string',
          minLength: 1,
          description: 'The kubeconfig context to use. Default: the var `kplay_context`, else the cluster\u2019s name.',
        },
        kubeconfig: {
          type: 'string',
          minLength: 1,
          description:
            'Path of the kubeconfig file. `~/` and `$VAR`/`${VAR}` are expanded; a relative path is relative to the ' +
            'inventory file\u2019s directory. Default: the first path of `$KUBECONFIG`, else `~/.kube/config`.',
        },
        vars: {
          $ref: '#/definitions/vars',
          description: 'Variables for this cluster only; they override all group vars.',
        },
      },
      additionalProperties: false,
    },
  },
};
