# Shared by scripts/quickstart and scripts/test: install what is missing (Debian),
# configure and build. Sourced, not run.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${NUMPIPE_BUILD_DIR:-$ROOT/build}

# Debian packages numpipe builds and tests with.
PACKAGES=(g++ cmake ninja-build pkg-config libzstd-dev libcxxopts-dev doctest-dev nlohmann-json3-dev
          libpng-dev libgif-dev libcairo2-dev fonts-dejavu-core libnetcdf-dev libeigen3-dev python3-numpy bsdutils libopenmpi-dev openmpi-bin)

# Only the tests need these: chromium renders profile-report's HTML headless; ffmpeg
# render's MP4 tests; python3-matplotlib
# docs/price.md's smile picture; man-db shows the installed man pages (ctest -R install);
# python3-xarray and python3-netcdf4 run docs/python.md's xarray example;
# python3-venv and python3-setuptools the pip install of share/python; clang and its
# libFuzzer (libclang-rt-dev) build the stream and PNG readers' fuzz targets. Without them
# those parts skip themselves.
TEST_PACKAGES=(chromium ffmpeg python3-matplotlib man-db python3-xarray python3-netcdf4 python3-venv python3-setuptools clang libclang-rt-dev quantlib-python r-base-core r-cran-fgarch)

install_missing() {
  local missing=() wanted=("${PACKAGES[@]}")
  [ "${1:-}" = --with-test-packages ] && wanted+=("${TEST_PACKAGES[@]}")
  for p in "${wanted[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if ! command -v apt-get > /dev/null; then
    echo "numpipe: please install: ${missing[*]} (Debian/Ubuntu package names)" >&2
    return 0  # not Debian: try to build with what is there
  fi
  if [ "$(id -u)" = 0 ]; then
    echo "numpipe: installing ${missing[*]}" >&2
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" > /dev/null
  elif command -v sudo > /dev/null && sudo -n true 2> /dev/null; then
    DEBIAN_FRONTEND=noninteractive sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" > /dev/null
  else
    echo "numpipe: missing packages; run as root:  apt-get install ${missing[*]}" >&2
    # Without the test-only packages the tests that need them skip themselves.
    for p in "${missing[@]}"; do
      [[ " ${TEST_PACKAGES[*]} " == *" $p "* ]] || exit 2
    done
  fi
}

# nvcc is often installed outside PATH.
find_cuda() {
  if ! command -v nvcc > /dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then export PATH=/usr/local/cuda/bin:$PATH; fi
}

# configure [CMAKE OPTIONS...]: cmake's configure step into $BUILD (log in $BUILD.configure.log).
configure() {
  find_cuda
  local generator=()
  command -v ninja > /dev/null && generator=(-G Ninja)
  local werror=OFF
  [ "${CI:-}" = true ] && werror=ON   # warnings are errors in CI
  cmake -S "$ROOT" -B "$BUILD" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DNUMPIPE_WERROR=$werror "$@" > "$BUILD.configure.log" 2>&1 ||
    { cat "$BUILD.configure.log" >&2; echo "numpipe: cmake configure failed (log above)" >&2; exit 1; }
  grep -E "numpipe:" "$BUILD.configure.log" >&2 || true
}

# build_targets [TARGETS...]: builds TARGETS (everything, tests included, when none is named) on every CPU.
build_targets() {
  local targets=()
  [ $# -gt 0 ] && targets=(--target "$@")
  cmake --build "$BUILD" -j "$(nproc)" "${targets[@]}"
}

configure_and_build() { configure "$@"; build_targets; }

# fuzz_target TARGET SECONDS CORPUS MAX_LEN: builds the libFuzzer target TARGET (tests/fuzz)
# with clang in $BUILD-fuzz and fuzzes for SECONDS from the committed corpus
# tests/fuzz/CORPUS (new inputs go to a scratch copy), inputs up to MAX_LEN bytes; a
# crash or sanitizer report fails. Skipped, saying so, without clang and libFuzzer.
fuzz_target() {
  local target=$1 seconds=$2 seeds=$ROOT/tests/fuzz/$3 max_len=$4 fuzz=$BUILD-fuzz
  if ! command -v clang++ > /dev/null || ! echo 'extern "C" int LLVMFuzzerTestOneInput(const char*, unsigned long) { return 0; }' |
      clang++ -x c++ -fsanitize=fuzzer - -o /dev/null 2> /dev/null; then
    echo "numpipe: fuzzing skipped: clang with libFuzzer not found (Debian: apt-get install clang libclang-rt-dev)" >&2
    return 0
  fi
  mkdir -p "$fuzz"
  CC=clang CXX=clang++ cmake -S "$ROOT" -B "$fuzz" -G Ninja -DCMAKE_BUILD_TYPE=Release -DNUMPIPE_FUZZ=ON -DNUMPIPE_CUDA=OFF \
    -DNUMPIPE_WORKLOADS= > "$fuzz/configure.log" 2>&1 || { cat "$fuzz/configure.log" >&2; exit 1; }
  cmake --build "$fuzz" --target "$target" -j "$(nproc)"
  local corpus
  corpus=$(mktemp -d)
  cp "$seeds"/* "$corpus/"
  (cd "$corpus" && "$fuzz/fuzz/$target" -max_total_time="$seconds" -max_len="$max_len" -rss_limit_mb=2048 -timeout=10 \
     -print_final_stats=1 "$corpus" 2> "$fuzz/$target.log") || {
    tail -50 "$fuzz/$target.log" >&2
    echo "numpipe: the fuzzer found a crash (log: $fuzz/$target.log; reproducer: crash-* in $corpus)" >&2
    exit 1
  }
  grep -E "stat::number_of_executed_units|Done" "$fuzz/$target.log" | tail -2 >&2
  rm -rf "$corpus"
}
fuzz_stream_reader() { fuzz_target fuzz_stream_reader "$1" corpus 4096; }
