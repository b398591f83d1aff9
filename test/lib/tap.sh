# For the shell test suites (test/clients): TAP-style checks
# and polling with a deadline instead of fixed sleeps. Source it after setting
# `deadline` (seconds a poll may take).
passed=0
failed=0
n=0

ok()   { n=$((n + 1)); passed=$((passed + 1)); echo "ok $n - $1"; }
fail() { n=$((n + 1)); failed=$((failed + 1)); echo "not ok $n - $1"; }
# check WHAT CMD...: one check, passed when CMD succeeds.
check() { local what=$1; shift; if "$@"; then ok "$what"; else fail "$what"; fi; }

# until_true CMD...: runs CMD until it succeeds or `deadline` seconds pass.
until_true() {
    local end=$((SECONDS + deadline))
    while [ "$SECONDS" -lt "$end" ]; do
        "$@" && return 0
        sleep 0.1
    done
    return 1
}
