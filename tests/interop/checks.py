"""The bookkeeping of the script tests: count checks, keep failures, and end
with the closing line ctest's logs and CI read ('N passed, N failed')."""
import sys

failures = []
checks = 0


def check(cond, msg):
    global checks
    checks += 1
    if not cond:
        failures.append(msg)


def finish(label):
    for f in failures[:20]:
        print("FAIL:", f)
    print("%s: %d checks, %d failures" % (label, checks, len(failures)))
    print("%d passed, %d failed" % (checks - len(failures), len(failures)))
    sys.exit(1 if failures else 0)
