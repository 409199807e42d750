#!/usr/bin/env bash
echo "$*" >>"$FAKE_SANITIZER_LOG"
[[ $1 == --tool && $3 == --error-exitcode && $5 == --report-api-errors && $6 == no ]] || exit 70
code=$4
shift 6
# memcheck also gets --track-stream-ordered-races all.
if [[ $1 == --track-stream-ordered-races ]]; then shift 2; fi
echo '========= COMPUTE-SANITIZER'
errors_file=$(mktemp)
nocuda_file=$(mktemp)
"$@" 2>&1 | while IFS= read -r line || [[ -n $line ]]; do
    if [[ $line == *FAKE_NO_CUDA_CALL* ]]; then
        echo >>"$nocuda_file"
    elif [[ $line == *FAKE_SANITIZER_ERROR* ]]; then
        echo >>"$errors_file"
        echo '========= Invalid __global__ read of size 4 bytes'
        echo '=========     at fake_kernel+0x10'
    else
        printf '%s\n' "$line"
    fi
done
rc=${PIPESTATUS[0]}
errors=$(wc -l <"$errors_file")
nocuda=$(wc -l <"$nocuda_file")
rm -f "$errors_file" "$nocuda_file"
if ((nocuda && !errors)); then
    echo '========= Error: Target application terminated before first instrumented API call'
    exit 255
fi
echo "========= ERROR SUMMARY: $errors errors"
((errors)) && exit "$code"
exit "$rc"
