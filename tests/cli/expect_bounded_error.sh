#!/bin/sh
# Usage: expect_bounded_error.sh LOCKSTEP REGEX ARGS...
# expect_error.sh under limits: a malformed input must be refused quickly and in little memory
# (issue 22: 2 s and 200 MB measured; here 5 s and 512 MiB of address space, so that a loaded
# machine does not fail the test while a loop or an alias bomb, which take gigabytes, still does).
ulimit -v 524288
exec timeout 5 sh "$(dirname "$0")/expect_error.sh" "$@"
