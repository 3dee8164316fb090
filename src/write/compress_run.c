/* The compress workflow as one call of the stable API (dctk_compress_run in
 * dctk/compress.h): the options as JSON text, read here into the structs of
 * dctk_compress, and the library's own sweep (dctk_evaluate_variable, no
 * progress bar), saying what the command line says through the caller's
 * sink. The defaults are those of `dc_toolkit compress`, but for the
 * threshold table: none unless "thresholds" names one, so that a field
 * without "l1_threshold" is written losslessly. */
#include <math.h>
#include <string.h>

#include "dctk/compress.h"
#include "dctk/threads.h"
#include "dctk/util.h"

typedef struct {
    const char *dataset;
    const dctk_evaluate_opts *eo;
    const dctk_write_step *w;
} run_sweep;

static int sweep_fields(void *user, dctk_compress_want_fn want, void *want_user, dctk_compress_swept_fn done,
                        void *done_user) {
    const run_sweep *r = user;
    dctk_dataset *ds;
    dctk_status st = dctk_dataset_open(r->dataset, &ds);
    if (st != DCTK_OK) return dctk_say_fail(r->w, st);
    int failures = 0;
    for (size_t v = 0; v < dctk_dataset_nvars(ds); v++) {
        if (!want(want_user, ds, v)) continue;
        const dctk_var *var = dctk_dataset_var(ds, v);
        dctk_evaluate_summary sum;
        if ((st = dctk_evaluate_variable(ds, v, r->eo, &sum)) != DCTK_OK) {
            dctk_say(r->w, DCTK_SAY_ERR, "dc_toolkit %s: %s: %s\n", r->w->cmd, var->name, dctk_detail());
            failures++;
            continue;
        }
        if (sum.no_sweep[0]) dctk_say(r->w, DCTK_SAY_OUT, "%s: no sweep: %s\n", var->name, sum.no_sweep);
        else dctk_say(r->w, DCTK_SAY_OUT, "%s: swept a space of %zu combos (%zu measured on the whole sample), "
                      "best %s\n", var->name, sum.ncombos, sum.nmeasured, sum.best >= 0 ? sum.best_name : "(none kept)");
        done(done_user, var, &sum);
    }
    dctk_dataset_close(ds);
    return failures ? 1 : 0;
}

/* The options object, key by key, into the structs; DCTK_ERR_ARG naming the
 * key that is unknown or of the wrong type. pipeline_text gets the
 * "pipeline" value as text (a new string to free, or NULL). */
static dctk_status read_options(json_t *o, dctk_evaluate_opts *eo, dctk_compress_opts *co,
                                char **pipeline_text) {
    const char *key;
    json_t *val;
    json_object_foreach(o, key, val) {
        bool ok = true;
        if (!strcmp(key, "vars")) ok = (co->vars = json_string_value(val)) != NULL;
        else if (!strcmp(key, "pipeline"))
            ok = (*pipeline_text = json_is_string(val) ? strdup(json_string_value(val)) : json_dumps(val, 0)) != NULL;
        else if (!strcmp(key, "l1_threshold")) ok = json_is_number(val) && (eo->override_l1 = json_number_value(val)) > 0;
        else if (!strcmp(key, "thresholds")) ok = (eo->thresholds_csv = json_string_value(val)) != NULL;
        else if (!strcmp(key, "eval_data_size_limit"))
            ok = json_is_string(val) && dctk_parse_size(json_string_value(val), &eo->size_limit) == DCTK_OK;
        else if (!strcmp(key, "inner_chunk_mib"))
            ok = json_is_number(val) && (co->write.inner_chunk_mib = json_number_value(val)) * 1048576 >= 1;
        else if (!strcmp(key, "shard_mib"))
            ok = json_is_number(val) && (co->write.shard_mib = json_number_value(val)) * 1048576 >= 1;
        else if (!strcmp(key, "threads"))
            ok = json_is_integer(val) && (co->write.threads = (long)json_integer_value(val)) >= 0 &&
                 co->write.threads <= 4096;
        else if (!strcmp(key, "verify")) ok = json_is_boolean(val) && ((co->write.verify = json_is_true(val)), true);
        else if (!strcmp(key, "skip_existing"))
            ok = json_is_boolean(val) && ((co->skip_existing = json_is_true(val)), true);
        else if (!strcmp(key, "codecs"))
            ok = json_is_string(val) && dctk_portability_parse(json_string_value(val), &co->write.level) &&
                 strcmp(json_string_value(val), "dctk") != 0;
        else if (!strcmp(key, "search")) {
            const char *s = json_string_value(val);
            ok = s && (!strcmp(s, "adaptive") || !strcmp(s, "exhaustive"));
            if (ok) eo->search = strcmp(s, "adaptive") ? DCTK_SEARCH_EXHAUSTIVE : DCTK_SEARCH_ADAPTIVE;
        } else
            return DCTK_FAIL(DCTK_ERR_ARG, "options: unknown key '%s' (vars, pipeline, l1_threshold, thresholds, "
                             "eval_data_size_limit, inner_chunk_mib, shard_mib, threads, verify, skip_existing, "
                             "codecs, search)", key);
        if (!ok) {
            char *text = json_dumps(val, JSON_ENCODE_ANY);
            dctk_set_detail("options: '%s' cannot be %s", key, text ? text : "that");
            free(text);
            return DCTK_ERR_ARG;
        }
    }
    return DCTK_OK;
}

int dctk_compress_run(const char *dataset, const char *dir, const char *options_json, dctk_say_fn say,
                      void *say_user) {
    dctk_compress_opts co = {.skip_existing = true};
    dctk_write_step_defaults(&co.write);
    co.write.dataset = dataset;
    co.write.where = dir;
    co.write.say = say;
    co.write.say_user = say_user;
    dctk_evaluate_opts eo = {.gates = dctk_gates_none(), .gates_set = true, .where = dir,
                             .size_limit = 5000000000ULL, .override_l1 = NAN,
                             .max_inner_chunk_bytes = 256ull << 20, .space = {.with_lossy = true}};
    char *pipeline = NULL;
    json_error_t err;
    json_t *o = options_json ? json_loads(options_json, 0, &err) : json_object();
    dctk_status st = DCTK_OK;
    if (!dataset || !dir) st = DCTK_FAIL(DCTK_ERR_ARG, "give the dataset and the folder to write into");
    else if (!o) st = options_json ? DCTK_FAIL(DCTK_ERR_ARG, "options: %s", err.text) : DCTK_NOMEM();
    else if (!json_is_object(o)) st = DCTK_FAIL(DCTK_ERR_ARG, "options: give a JSON object");
    else st = read_options(o, &eo, &co, &pipeline);
    if (st != DCTK_OK) {
        json_decref(o);
        free(pipeline);
        return dctk_say_fail(&co.write, st);
    }
    co.pipeline = pipeline;
    eo.gates.l1 = eo.override_l1;
    eo.inner_chunk_bytes = (uint64_t)(co.write.inner_chunk_mib * 1048576);
    eo.threads = co.write.threads ? (int)co.write.threads : dctk_available_cores();
    co.write.threads = eo.threads;
    /* the sweep's best file names first what this run writes */
    eo.codecs_level = co.write.level == DCTK_PORT_DCTK ? "all" : dctk_portability_name(co.write.level);
    co.write.max_inner_chunk_bytes = eo.max_inner_chunk_bytes;
    run_sweep call = {.dataset = dataset, .eo = &eo, .w = &co.write};
    co.eval = &eo;
    co.sweep = sweep_fields;
    co.sweep_user = &call;
    co.size = 1;
    int rc = dctk_compress(&co);
    json_decref(o);
    free(pipeline);
    return rc;
}
