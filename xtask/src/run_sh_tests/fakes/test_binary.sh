#!/usr/bin/env bash
if [[ $1 == --list ]]; then
    if [[ " $* " == *" --ignored "* ]]; then
        printf '%s: test\n' gpu::fails gpu::skips
    else
        printf '%s: test\n' passes gpu::fails gpu::skips
        echo 'bench_thing: benchmark'
    fi
    exit 0
fi
[[ $1 == --exact && " $* " == *" --include-ignored "* && " $* " == *" --nocapture "* ]] || exit 64
echo
echo 'running 1 test'
case $2 in
    passes) echo 'test passes ... ok' ;;
    gpu::fails) printf 'test gpu::fails ... \nboom "quoted" \\ tab\there\n'; exit 101 ;;
    gpu::skips) printf 'test gpu::skips ... \nRUCUDA_SKIPPED: no device here\nok\n' ;;
    *) exit 65 ;;
esac
