#!/usr/bin/env bash
if [[ $1 == --list ]]; then
    if [[ " $* " == *" --ignored "* ]]; then
        printf '%s: test\n' gpu::fails gpu::skips
        [[ -n $FAKE_MARKS ]] && echo 'gpu::out_of_memory_alone: test'
    else
        printf '%s: test\n' passes gpu::fails gpu::skips
        [[ -n $FAKE_MARKS ]] && echo 'gpu::out_of_memory_alone: test'
        echo 'bench_thing: benchmark'
    fi
    exit 0
fi
[[ $1 == --exact && " $* " == *" --include-ignored "* && " $* " == *" --nocapture "* ]] || exit 64
echo
echo 'running 1 test'
# With FAKE_MARKS set, each test leaves its name there; the out-of-memory test passes only
# when every other test ran before it and the GPU was not marked shared.
[[ -n $FAKE_MARKS && $2 != gpu::out_of_memory_alone ]] && { sleep 0.2; touch "$FAKE_MARKS/${2//:/_}"; }
case $2 in
    passes) echo 'test passes ... ok' ;;
    gpu::fails) printf 'test gpu::fails ... \nboom "quoted" \\ tab\there\n'; exit 101 ;;
    gpu::skips) printf 'test gpu::skips ... \nRUCUDA_SKIPPED: no device here\nok\n' ;;
    gpu::out_of_memory_alone)
        echo 'test gpu::out_of_memory_alone ... '
        [[ -z ${RUCUDA_TEST_SHARED_GPU:-} ]] || { echo 'ran with the GPU shared'; exit 101; }
        for n in passes gpu__fails gpu__skips; do
            [[ -e $FAKE_MARKS/$n ]] || { echo "ran before $n ended"; exit 101; }
        done
        echo ok ;;
    *) exit 65 ;;
esac
