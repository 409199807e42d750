#!/usr/bin/env bash
TESTS='@TESTS@'
mapfile -t spec < <(printf '%s\n' "$TESTS" | grep . | sort)
if [[ $1 == --list ]]; then
    only_ignored=0
    [[ " $* " == *" --ignored "* ]] && only_ignored=1
    for line in "${spec[@]}"; do
        read -r name ignored _ <<<"$line"
        ((only_ignored && !ignored)) && continue
        printf '%s: test\n' "$name"
    done
    ((only_ignored)) || echo 'bench_thing: benchmark'
    exit 0
fi
[[ -n $FAKE_RAN ]] && echo "${0##*/} $* [RUCUDA_SANITIZER=$RUCUDA_SANITIZER]" >>"$FAKE_RAN"
[[ " $* " == *" --test-threads=1 "* && " $* " == *" --nocapture "* ]] || exit 64
exact=0 ignored_only=0 include_ignored=0 filters=()
for a in "$@"; do
    case $a in
        --exact) exact=1 ;;
        --ignored) ignored_only=1 ;;
        --include-ignored) include_ignored=1 ;;
        --test-threads=1 | --nocapture) ;;
        -*) echo "unknown option $a" >&2; exit 64 ;;
        *) filters+=("$a") ;;
    esac
done
selected=()
for line in "${spec[@]}"; do
    read -r name ignored behaviour <<<"$line"
    ((ignored_only && !ignored)) && continue
    ((!ignored_only && !include_ignored && ignored)) && continue
    if ((${#filters[@]})); then
        hit=0
        for f in "${filters[@]}"; do
            if ((exact)); then [[ $name == "$f" ]] && hit=1; else [[ $name == *"$f"* ]] && hit=1; fi
        done
        ((hit)) || continue
    fi
    selected+=("$name $behaviour")
done
echo
if ((${#selected[@]} == 1)); then echo 'running 1 test'; else echo "running ${#selected[@]} tests"; fi
failed=()
for line in "${selected[@]}"; do
    read -r name behaviour <<<"$line"
    if [[ $behaviour == should_panic ]]; then
        printf 'test %s - should panic ... ' "$name"
    else
        printf 'test %s ... ' "$name"
    fi
    case $behaviour in
        should_panic) echo "thread '$name' panicked: as it should"; echo ok ;;
        quiet) echo ok ;;
        pass) printf 'random seed 42\nchecked ok\n'; echo ok ;;
        skip) printf '\nRUCUDA_SKIPPED: no device here\n'; echo ok ;;
        fail)
            printf '\nboom "quoted" \\ tab\there\n'
            echo "thread '$name' panicked at src/lib.rs:1:1:" >&2
            echo 'assertion failed' >&2
            echo FAILED
            failed+=("$name")
            ;;
        fail_together)
            if ((${#selected[@]} > 1)); then
                echo 'the previous test left a mess'
                echo FAILED
                failed+=("$name")
            else
                echo ok
            fi
            ;;
        sanerr) echo FAKE_SANITIZER_ERROR; echo ok ;;
        skip_nocuda) printf '\nRUCUDA_SKIPPED: provokes errors\nFAKE_NO_CUDA_CALL\n'; echo ok ;;
        sanerr_together)
            ((${#selected[@]} > 1)) && echo FAKE_SANITIZER_ERROR
            echo ok
            ;;
        crash) echo 'about to crash'; exit 134 ;;
        hang) echo 'hanging'; sleep 60; echo ok ;;
        *) exit 65 ;;
    esac
done
if ((${#failed[@]})); then
    printf '\nfailures:\n\nfailures:\n'
    printf '    %s\n' "${failed[@]}"
    printf '\ntest result: FAILED. %d passed; %d failed; 0 ignored\n\n' \
        $((${#selected[@]} - ${#failed[@]})) ${#failed[@]}
    exit 101
fi
printf '\ntest result: ok. %d passed; 0 failed; 0 ignored\n\n' ${#selected[@]}
