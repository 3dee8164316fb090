/* Callgrind client requests for Python (ctypes), so that bench/codecs_instr.py
 * can count the instructions of numcodecs calls exactly as bench_codecs.c
 * counts ours: collection on around the calls, then a labelled dump. Outside
 * valgrind every request is a no-op. */
#include <valgrind/callgrind.h>

void dctk_cg_toggle(void) { CALLGRIND_TOGGLE_COLLECT; }

void dctk_cg_dump(const char *what) { CALLGRIND_DUMP_STATS_AT(what); }
