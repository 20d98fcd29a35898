#!/usr/bin/env bash
# Install what `npm run bench` needs besides the sandbox (test/sandbox/install.sh) on a Debian
# machine, as root. Idempotent: only installs what is missing.
#  - GNU time (/usr/bin/time -v, peak RSS of kplay in B3)
#  - haproxy (B6; test/sandbox/install.sh installs it too)
#  - prometheus (B12, the analysis gate; Debian's package, started by the benchmark, never the service)
#  - Ansible (the PyPI bundle `ansible`, pinned: 12.3.0 = ansible-core 2.19.14 + kubernetes.core 6.2.0, community.general, …)
#    plus the `kubernetes` Python client, in a venv outside the repo:
#    ${KPLAY_BENCH_VENV:-~/.cache/kplay-bench/venv}
#  - helm 3 (helm.sh/helm/v3/cmd/helm, built with `go install` from the Go module proxy) in
#    ${KPLAY_BENCH_HELM3:-~/.cache/kplay-bench/helm3}/helm: kubernetes.core's helm modules run
#    `helm list --all`, a flag helm 4 removed, so the reference (test/integration/kcore-helm-parity)
#    runs them with helm 3. Needs Go (about 6 minutes on 2 busy cores the first time, downloads included; skipped when present).
set -euo pipefail
VENV="${KPLAY_BENCH_VENV:-$HOME/.cache/kplay-bench/venv}"
HELM3_DIR="${KPLAY_BENCH_HELM3:-$HOME/.cache/kplay-bench/helm3}"
HELM3_VERSION=v3.22.0

install_helm3() {
  if [ -x "$HELM3_DIR/helm" ] && "$HELM3_DIR/helm" version --template '{{.Version}}' 2>/dev/null | grep -qx "$HELM3_VERSION"; then
    echo "bench install: helm $HELM3_VERSION ready at $HELM3_DIR/helm"
    return 0
  fi
  if ! command -v go >/dev/null 2>&1; then
    echo "bench install: go not found: cannot build helm $HELM3_VERSION (the kubernetes.core helm parity test needs it)" >&2
    return 1
  fi
  mkdir -p "$HELM3_DIR"
  # GOPROXY and the rest of the Go environment are the caller's; outside any module
  # -X: `go install` leaves helm's version at its default ("v3.22"); helm's Makefile sets it so
  (cd "$HELM3_DIR" && GOFLAGS=-mod=mod GOBIN="$HELM3_DIR" go install -ldflags "-X helm.sh/helm/v3/internal/version.version=$HELM3_VERSION" "helm.sh/helm/v3/cmd/helm@$HELM3_VERSION")
  echo "bench install: helm $("$HELM3_DIR/helm" version --template '{{.Version}}') built at $HELM3_DIR/helm"
}
install_helm3

missing=()
[ -x /usr/bin/time ] || missing+=(time)
command -v haproxy >/dev/null 2>&1 || [ -x /usr/sbin/haproxy ] || missing+=(haproxy)
command -v prometheus >/dev/null 2>&1 || missing+=(prometheus)
command -v python3 >/dev/null 2>&1 || missing+=(python3)
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || missing+=(python3-venv)
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The reference is pinned: the `ansible` bundle 12.3.0 is ansible-core 2.19.14 with kubernetes.core 6.2.0
# (what the parity suites and the kubernetes.core targets are compared against).
ANSIBLE_PIN='ansible==12.3.0'
ANSIBLE_CORE_PIN='ansible-core==2.19.14'
# virtualenv: kubernetes.core's k8s_validate target makes virtualenvs with `pip: virtualenv_command: virtualenv`
if [ -x "$VENV/bin/ansible-playbook" ] && [ -x "$VENV/bin/virtualenv" ] && "$VENV/bin/python" -c 'import kubernetes, jmespath' >/dev/null 2>&1 \
  && "$VENV/bin/python" -c 'import importlib.metadata as m, sys; sys.exit(m.version("ansible") != "12.3.0" or m.version("ansible-core") != "2.19.14")' >/dev/null 2>&1 \
  && "$VENV/bin/ansible-doc" -t module kubernetes.core.k8s >/dev/null 2>&1 \
  && "$VENV/bin/ansible-doc" -t module community.general.haproxy >/dev/null 2>&1; then
  echo "bench install: ansible venv ready at $VENV"
  exit 0
fi
mkdir -p "$(dirname "$VENV")"
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
"$VENV/bin/pip" install -q --upgrade pip
"$VENV/bin/pip" install -q "$ANSIBLE_PIN" "$ANSIBLE_CORE_PIN" kubernetes jmespath virtualenv
"$VENV/bin/ansible-doc" -t module kubernetes.core.k8s >/dev/null
"$VENV/bin/ansible-doc" -t module community.general.haproxy >/dev/null
echo "bench install: ansible venv ready at $VENV ($("$VENV/bin/ansible-playbook" --version | sed -n 1p))"
