/* Option parsing and help text generated from each command's option table. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "dctk/eval.h"
#include "dctk/util.h"

const char *cli_opt_help(const cli_opt *o, char *buf, size_t cap) {
    static const struct {
        const char *key;
        dctk_codec_kind kind;
    } lists[] = {{"{compressors}", DCTK_CODEC_BB}, {"{filters}", DCTK_CODEC_AA}, {"{serializers}", DCTK_CODEC_AB}};
    const char *h = o->help ? o->help : "";
    for (size_t i = 0; i < sizeof lists / sizeof lists[0]; i++) {
        const char *at = strstr(h, lists[i].key);
        if (!at) continue;
        char fams[256];
        dctk_space_class_list(lists[i].kind, fams, sizeof fams);
        snprintf(buf, cap, "%.*s%s%s", (int)(at - h), h, fams, at + strlen(lists[i].key));
        return buf;
    }
    return h;
}

void cli_print_help(const cli_cmd *cmd) {
    fprintf(cli_out(), "usage: dc_toolkit %s %s\n\n%s\n", cmd->name, cmd->usage, cmd->help);
    fprintf(cli_out(), "\noptions:\n"); /* every command has at least --help */
    for (const cli_opt *o = cmd->opts; o && o->name; o++) {
        char left[96];
        if (o->type == OPT_BOOL && o->neg) snprintf(left, sizeof left, "%s/%s", o->name, o->neg);
        else if (o->type == OPT_BOOL || o->type == OPT_CONST) snprintf(left, sizeof left, "%s", o->name);
        else snprintf(left, sizeof left, "%s %s", o->name, o->metavar ? o->metavar : "VALUE");
        char help[512];
        fprintf(cli_out(), "  %-34s %s\n", left, cli_opt_help(o, help, sizeof help));
    }
    fprintf(cli_out(), "  %-34s %s\n", "--help", "show this help and exit");
}

static int usage_error(const cli_cmd *cmd, const char *fmt, const char *arg) {
    fprintf(cli_err(), "dc_toolkit %s: ", cmd->name);
    fprintf(cli_err(), fmt, arg);
    fprintf(cli_err(), "\nusage: dc_toolkit %s %s   (see --help)\n", cmd->name, cmd->usage);
    return 2;
}

static int set_value(const cli_cmd *cmd, const cli_opt *o, const char *v) {
    char *end;
    switch (o->type) {
    case OPT_STR: *(const char **)o->dst = v; return 0;
    case OPT_INT:
        errno = 0;
        long n = strtol(v, &end, 10);
        if (errno || end == v || *end) return usage_error(cmd, "option expects an integer, got '%s'", v);
        *(long *)o->dst = n;
        return 0;
    case OPT_REAL:
        errno = 0;
        double d = strtod(v, &end);
        if (errno || end == v || *end) return usage_error(cmd, "option expects a number, got '%s'", v);
        /* NaN would read as "not given" (the table's threshold, no bound) and inf as no limit: refused */
        if (!isfinite(d)) return usage_error(cmd, "option expects a finite number, got '%s'", v);
        *(double *)o->dst = d;
        return 0;
    case OPT_SIZE:
        if (dctk_parse_size(v, (uint64_t *)o->dst) != DCTK_OK) return usage_error(cmd, "%s", dctk_detail());
        return 0;
    case OPT_BOOL:
    case OPT_CONST: break;
    }
    return 0;
}

int cli_refuse_foreign(const char *cmd, const char *arg, const cli_foreign *f) {
    fprintf(cli_err(), "dc_toolkit %s: '%s' is the Python dc_toolkit's; here: %s\n", cmd, arg, f->here);
    return 2;
}

/* The Python tool's option of this command that we refuse, or NULL. */
static const cli_foreign *foreign_opt(const cli_cmd *cmd, const char *a, size_t len) {
    for (const cli_foreign *f = cmd->foreign; f && f->name; f++)
        if (strlen(f->name) == len && strncmp(f->name, a, len) == 0) return f;
    return NULL;
}

/* A value follows: not the end, and not another option (a negative number is a value). */
static bool value_follows(int i, int argc, char **argv) {
    if (i + 1 >= argc) return false;
    const char *v = argv[i + 1];
    return !(v[0] == '-' && v[1] == '-');
}

int cli_parse(const cli_cmd *cmd, int argc, char **argv, const char **pos, int min_pos, int max_pos, int *npos) {
    int np = 0;
    bool only_pos = false;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        /* "-1" is an index (none), not an option: no option starts with a digit */
        if (only_pos || a[0] != '-' || a[1] == '\0' || (a[1] >= '0' && a[1] <= '9')) {
            if (np >= max_pos) return usage_error(cmd, "unexpected argument '%s'", a);
            pos[np++] = a;
            continue;
        }
        if (strcmp(a, "--") == 0) {
            only_pos = true;
            continue;
        }
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            cli_print_help(cmd);
            return -1;
        }
        const char *eq = strchr(a, '=');
        size_t len = eq ? (size_t)(eq - a) : strlen(a);
        const cli_opt *o = cmd->opts;
        bool neg = false;
        for (; o && o->name; o++) {
            if (strlen(o->name) == len && strncmp(o->name, a, len) == 0) break;
            if (o->neg && strlen(o->neg) == len && strncmp(o->neg, a, len) == 0) {
                neg = true;
                break;
            }
        }
        if (!o || !o->name) {
            const cli_foreign *f = foreign_opt(cmd, a, len);
            if (f) {
                char name[128];
                snprintf(name, sizeof name, "%.*s", (int)(len < 120 ? len : 120), a);
                return cli_refuse_foreign(cmd->name, name, f);
            }
            return usage_error(cmd, "unknown option '%s'", a);
        }
        /* the Python tool's bare form of a valued option: its OPT_CONST twin */
        if (o->type == OPT_STR && !eq && !value_follows(i, argc, argv))
            for (const cli_opt *c = o + 1; c->name; c++)
                if (c->type == OPT_CONST && strcmp(c->name, o->name) == 0) {
                    o = c;
                    break;
                }
        if (o->type == OPT_BOOL || o->type == OPT_CONST) {
            if (eq) return usage_error(cmd, "option '%s' takes no value", a);
            if (o->type == OPT_CONST) *(const char **)o->dst = o->metavar;
            else *(bool *)o->dst = !neg;
            continue;
        }
        const char *v = eq ? eq + 1 : (i + 1 < argc ? argv[++i] : NULL);
        if (!v) return usage_error(cmd, "option '%s' needs a value", a);
        int rc = set_value(cmd, o, v);
        if (rc) return rc;
    }
    if (np < min_pos) return usage_error(cmd, "%s", "missing arguments");
    if (npos) *npos = np;
    return 0;
}

int cli_fail(const char *cmd, dctk_status st) {
    const char *d = dctk_detail(), *at = dctk_detail_origin();
    fprintf(cli_err(), "dc_toolkit %s: %s%s%s%s\n", cmd, d[0] ? d : dctk_strerror(st), at[0] ? " (at " : "", at,
            at[0] ? ")" : "");
    return st == DCTK_ERR_ARG ? 2 : 1;
}

int cli_memory_share(const char *cmd, double given, double *fraction) {
    *fraction = 0;
    if (isnan(given)) return 0;
    if (!(given >= 0.05 && given <= 0.95)) {
        fprintf(cli_err(), "dc_toolkit %s: --memory-threshold takes a share of the memory from 0.05 to 0.95, not %g "
                        "(--max-memory takes a size)\n", cmd, given);
        return 2;
    }
    *fraction = given;
    return 0;
}
