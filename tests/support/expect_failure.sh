#!/bin/sh
# expect_failure.sh STATUS PATTERN COMMAND [ARG...]
# Runs COMMAND and passes when it exits with STATUS and writes exactly one line to stderr, matching the
# extended regular expression PATTERN: how remat's programs report an error (not an abort, not a trace).
status=$1
pattern=$2
shift 2
err=$(mktemp)
"$@" 2>"$err" >/dev/null
got=$?
lines=$(wc -l <"$err")
ok=1
[ "$got" -eq "$status" ] || { echo "exit status $got, expected $status"; ok=0; }
[ "$lines" -eq 1 ] || { echo "$lines lines on stderr, expected 1"; ok=0; }
grep -Eq -- "$pattern" "$err" || { echo "stderr does not match: $pattern"; ok=0; }
echo "stderr:"
cat "$err"
rm -f "$err"
[ "$ok" -eq 1 ]
