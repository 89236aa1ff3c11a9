# Sourced by scripts/demo.sh and scripts/test.sh: the compiler cache, the job count, and stage timing.
#
#   configure BUILD_DIR [CMAKE_ARGS...]   # cmake -G Ninja, through ccache where it is installed
#   stage_timing                          # at exit, print each stage's minutes and the cache's hits
#   stage "NAME"                          # starts a timed stage
#
# ccache (scripts/install-deps.sh installs it) keys its cache on paths relative to the clone, so a fresh clone
# in another folder (as CI makes) reuses what an earlier build compiled and rebuilds only what changed.

jobs=$(nproc)
repo_root=$(pwd)
ccache_args=()
if command -v ccache >/dev/null; then
  export CCACHE_BASEDIR="$repo_root" CCACHE_NOHASHDIR=true
  export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-8G}
  ccache_args=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache
               -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi

configure() {
  local dir=$1
  shift
  cmake -S . -B "$dir" -G Ninja "${ccache_args[@]}" "$@" >/dev/null
}

stage_names=()
stage_seconds=()
stage_started=$SECONDS
stage() {
  stage_close
  stage_names+=("$1")
  stage_started=$SECONDS
  echo "== $1"
}
stage_close() {
  if ((${#stage_names[@]} > ${#stage_seconds[@]})); then
    stage_seconds+=($((SECONDS - stage_started)))
  fi
}
stage_summary() {
  stage_close
  local i
  echo "== minutes per stage:"
  for i in "${!stage_seconds[@]}"; do
    awk -v s="${stage_seconds[$i]}" -v name="${stage_names[$i]}" 'BEGIN { printf "   %5.1f  %s\n", s / 60, name }'
  done
  awk -v s="$SECONDS" 'BEGIN { printf "   %5.1f  in all\n", s / 60 }'
  if ((${#ccache_args[@]})); then
    ccache --print-stats 2>/dev/null | awk -F'\t' '$1 ~ /^(direct|preprocessed)_cache_hit$/ { hits += $2 }
      $1 == "cache_miss" { miss = $2 } END { printf "== ccache since the start: %d hits, %d misses\n", hits, miss }'
  fi
}
stage_timing() { # the summary at exit, with this run's compiler-cache hits and misses
  ((${#ccache_args[@]} == 0)) || ccache --zero-stats >/dev/null
  trap stage_summary EXIT
}
