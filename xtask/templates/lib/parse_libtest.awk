# Splits the stamped output of one test binary run by libtest with --test-threads=1 and
# --nocapture into its tests (run.sh sanitize). libtest prints "test NAME ... " when a test
# starts (or "test NAME - should panic ... "), then the test's own output, then "ok" or
# "FAILED" at the end of a line; after the last test a "failures:" list of the failed
# tests' names (indented by 4 spaces) and a line starting with "test result:".
# Input: the stamped log (time, tab, line). Variables: names=FILE (the names asked for,
# one a line), t0 and tend (when the process started and ended), marker (the skip
# marker), us (the output's field separator).
# Output, one line per name in their order (fields separated by us): status (passed,
# failed, skipped, crashed: running when the output stopped, notrun, noresult), name,
# seconds, first and last line of its output in the log, skip reason; then a last line
# "#", whether libtest finished, whether a sanitizer summary reported errors, the test
# that was running when the output stopped.
function finish() {
    if (cur != "") { prev = end[cur]; cur = "" }
}
BEGIN {
    n = 0; cur = ""; done = 0; fails = 0; sanerr = 0; prev = t0 + 0
    while ((getline line < names) > 0) if (line != "") { known[line] = 1; order[++n] = line }
    close(names)
}
{
    tab = index($0, "\t")
    ts = substr($0, 1, tab - 1) + 0
    text = substr($0, tab + 1)
    sub(/\r$/, "", text)
    if (text ~ /^=+( |$)/) {
        if (text ~ /ERROR SUMMARY: [1-9]/ || text ~ /\([1-9][0-9]* errors?,/) sanerr = 1
        if (cur != "") { last[cur] = FNR; end[cur] = ts }
        next
    }
    if (fails) {
        if (substr(text, 1, 4) == "    " && (substr(text, 5) in known)) failed[substr(text, 5)] = 1
        if (text ~ /^test result: /) done = 1
        next
    }
    if (substr(text, 1, 5) == "test " && (p = index(text, " ... ")) > 0) {
        nm = substr(text, 6, p - 6)
        # "test NAME - should panic ... ": names have no spaces.
        if ((sp = index(nm, " ")) > 0) nm = substr(nm, 1, sp - 1)
        if ((nm in known) && !(nm in started)) {
            finish()
            cur = nm; started[nm] = 1; first[nm] = FNR; last[nm] = FNR
            begin[nm] = prev; end[nm] = ts
            text = substr(text, p + 5)
            if (text == "") next
        }
    }
    if (text ~ /^test result: /) { finish(); done = 1; next }
    if (text == "failures:") { finish(); fails = 1; next }
    if (cur == "") next
    last[cur] = FNR; end[cur] = ts
    if (index(text, marker) == 1) {
        r = substr(text, length(marker) + 1); sub(/^ +/, "", r); skip[cur] = r
    }
    if (text ~ /FAILED$/) kind[cur] = "FAILED"
    else if (text ~ /ok$/) kind[cur] = "ok"
    else if (text !~ /^[ \t]*$/) kind[cur] = ""
}
END {
    crashed = ""
    if (cur != "" && !done) crashed = cur
    for (i = 1; i <= n; i++) {
        nm = order[i]
        if (!(nm in started)) { st = "notrun"; secs = 0 }
        else {
            e = (nm == crashed) ? tend + 0 : end[nm]
            secs = e - begin[nm]; if (secs < 0) secs = 0
            if (nm == crashed) st = "crashed"
            else if ((nm in failed) || kind[nm] == "FAILED") st = "failed"
            else if (done || kind[nm] == "ok") st = (nm in skip) ? "skipped" : "passed"
            else st = "noresult"
        }
        printf "%s%s%s%s%.3f%s%d%s%d%s%s\n", st, us, nm, us, secs, us, first[nm] + 0, us, \
            last[nm] + 0, us, skip[nm]
    }
    printf "#%s%d%s%d%s%s\n", us, done, us, sanerr, us, crashed
}
