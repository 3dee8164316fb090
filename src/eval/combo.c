/* A combo result and its row, column for column from the schema
 * (DCTK_RESULT_SCHEMA), so that neither lists the metrics by hand. */
#include <math.h>
#include <stdio.h>

#include "dctk/eval.h"

dctk_result_row dctk_combo_row(const dctk_combo_result *r) {
    dctk_result_row row = {.comp_idx = r->c, .filt_idx = r->f, .ser_idx = r->s, .error = r->error, .solved = NAN};
#define COPY(name, kind, role) DCTK_RESULT_IN_COMBO_##role(row.name = r->name;)
    DCTK_RESULT_SCHEMA(COPY)
#undef COPY
    row.status = dctk_row_status_name(dctk_row_status_of(r->keep, r->error));
    return row;
}

dctk_combo_result dctk_combo_of_row(const dctk_result_row *row) {
    dctk_combo_result r = {.c = (int)row->comp_idx, .f = (int)row->filt_idx, .s = (int)row->ser_idx,
                           .phys_ok = row->pass_phys};
#define COPY(name, kind, role) DCTK_RESULT_IN_COMBO_##role(r.name = row->name;)
    DCTK_RESULT_SCHEMA(COPY)
#undef COPY
    snprintf(r.error, sizeof r.error, "%s", row->error ? row->error : "");
    return r;
}

void dctk_combo_unmeasured(dctk_combo_result *r) {
#define CLEAR(name, kind, role) DCTK_RESULT_IN_METRIC_##role(r->name = NAN;)
    DCTK_RESULT_SCHEMA(CLEAR)
#undef CLEAR
}
