#!/usr/bin/env bash
# TestU01 SmallCrush on every generator's CPU reference stream (see README.md here).
# Usage: crates/rucuda-rand/testu01/run.sh [GENERATOR...]   (default: all seven)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../../.." && pwd)"
exe="${TMPDIR:-/tmp}/rucuda-smallcrush"
if ! cc -O2 "$here/smallcrush.c" -o "$exe" ${TESTU01_CFLAGS:-} -ltestu01 -lprobdist -lmylib -lm; then
    echo "TestU01 was not found: install its headers and libraries (libtestu01, libprobdist," >&2
    echo "libmylib; set TESTU01_CFLAGS=\"-I... -L...\" for a non-standard place)." >&2
    exit 2
fi
(cd "$root" && cargo build --release -p rucuda-rand --example stream)
stream="$root/target/release/examples/stream"
generators=("$@")
if ((${#generators[@]} == 0)); then
    generators=(philox xorwow mrg32k3a sobol32 scrambled_sobol32 sobol64 scrambled_sobol64)
fi
for g in "${generators[@]}"; do
    echo "== SmallCrush: $g"
    "$stream" "$g" 1234 | "$exe" "$g" 2>&1 | tee "${TMPDIR:-/tmp}/smallcrush-$g.txt" |
        sed -n '/Summary results/,$p'
done
