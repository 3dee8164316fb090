/* Truncation check for netCDF classic, 64-bit offset and CDF5 files.
 *
 * libnetcdf opens a classic file whose data was cut off and returns fill
 * values for the missing bytes, so a half-copied file would be read as a
 * field full of holes. We walk the header (format: "NetCDF Classic and 64-bit
 * Offset Format" and "CDF-5" in the netCDF documentation) to find where the
 * last variable ends and compare that with the file size.
 *
 *   header   = magic numrecs dim_list gatt_list var_list
 *   list     = tag(32 bit) nelems [item ...]       (ABSENT: tag 0, nelems 0)
 *   name     = nelems chars, padded to 4 bytes
 *   dim      = name length                        (length 0: the record dim)
 *   attr     = name type(32 bit) nelems values, padded to 4 bytes
 *   var      = name nelems [dimid ...] attr_list type(32 bit) vsize begin
 * NON_NEG counts (numrecs, nelems, lengths, dimids, vsize) are 32-bit
 * big-endian in CDF-1/2 and 64-bit in CDF-5; begin is 32-bit in CDF-1 and
 * 64-bit in CDF-2/5. Record variables are interleaved: record r of a variable
 * starts at begin + r * recsize, recsize being the sum of their vsizes (one
 * record variable alone is not padded). */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "dctk/status.h"
#include "nc3size.h"

#define MAX_DIMS_NC3 8192
#define STREAMING 0xFFFFFFFFu

typedef struct rd {
    FILE *f;
    uint64_t pos, size;
    int version; /* 1, 2 or 5 */
    bool short_read;
    bool want_vars;
    dctk_nc3_var *vars; /* where each variable's data lies, when wanted */
    size_t nvars;
} rd;

static uint64_t get_be(rd *r, int nbytes) {
    uint8_t b[8];
    if (r->short_read || r->pos + (uint64_t)nbytes > r->size || fread(b, 1, (size_t)nbytes, r->f) != (size_t)nbytes) {
        r->short_read = true;
        return 0;
    }
    r->pos += (uint64_t)nbytes;
    uint64_t v = 0;
    for (int i = 0; i < nbytes; i++) v = v << 8 | b[i];
    return v;
}

static uint64_t non_neg(rd *r) { return get_be(r, r->version == 5 ? 8 : 4); }

static void skip(rd *r, uint64_t n) {
    if (r->short_read || n > r->size - r->pos || fseeko(r->f, (off_t)(r->pos + n), SEEK_SET) != 0) {
        r->short_read = true;
        return;
    }
    r->pos += n;
}

static uint64_t pad4(uint64_t n) { return (n + 3) & ~(uint64_t)3; }

static uint64_t type_size(uint64_t t) {
    static const uint8_t sizes[] = {0, 1, 1, 2, 4, 4, 8, 1, 2, 4, 8, 8};
    return t < sizeof sizes ? sizes[t] : 0;
}

static void skip_name(rd *r) { skip(r, pad4(non_neg(r))); }

static void skip_attrs(rd *r) {
    get_be(r, 4); /* NC_ATTRIBUTE or 0 */
    uint64_t n = non_neg(r);
    for (uint64_t i = 0; i < n && !r->short_read; i++) {
        skip_name(r);
        uint64_t t = get_be(r, 4), len = non_neg(r);
        skip(r, pad4(len * (type_size(t) ? type_size(t) : 1)));
    }
}

typedef struct extent {
    uint64_t fixed_end; /* end of the last non-record variable */
    uint64_t rec0_end;  /* end of the last record variable's data in record 0 */
    uint64_t recsize;   /* sum of the record variables' vsize */
    uint64_t one_rec;   /* bytes per record of the last record variable */
    uint64_t nrecvars;
} extent;

/* One variable: its data extent goes into e. */
static void walk_var(rd *r, const uint64_t *dimlen, uint64_t ndims_file, extent *e) {
    skip_name(r);
    uint64_t nd = non_neg(r), elems = 1;
    bool record = false;
    for (uint64_t d = 0; d < nd && !r->short_read; d++) {
        uint64_t id = non_neg(r);
        uint64_t len = id < ndims_file ? dimlen[id] : 0;
        if (d == 0 && id < ndims_file && len == 0) record = true;
        else elems *= len;
    }
    skip_attrs(r);
    uint64_t type = get_be(r, 4), bytes = elems * type_size(type), vsize = non_neg(r);
    uint64_t begin = get_be(r, r->version == 1 ? 4 : 8);
    if (r->vars) r->vars[r->nvars++] = (dctk_nc3_var){.begin = begin, .type = (int)type, .record = record};
    if (!record) {
        if (begin + bytes > e->fixed_end) e->fixed_end = begin + bytes;
        return;
    }
    if (begin + bytes > e->rec0_end) e->rec0_end = begin + bytes;
    e->recsize += vsize;
    e->one_rec = bytes;
    e->nrecvars++;
}

/* Bytes the header says the file holds; 0 and short_read on a bad header. */
static uint64_t expected_size(rd *r) {
    uint64_t numrecs = non_neg(r);
    get_be(r, 4); /* NC_DIMENSION or 0 */
    uint64_t ndims = non_neg(r), dimlen[MAX_DIMS_NC3];
    if (ndims > MAX_DIMS_NC3) {
        r->short_read = true;
        return 0;
    }
    for (uint64_t d = 0; d < ndims; d++) {
        skip_name(r);
        dimlen[d] = non_neg(r);
    }
    skip_attrs(r);
    get_be(r, 4); /* NC_VARIABLE or 0 */
    uint64_t nvars = non_neg(r);
    extent e = {0};
    if (r->want_vars && nvars > (r->size - r->pos) / 16) r->short_read = true; /* an entry takes 16 bytes or more */
    if (r->want_vars && !r->short_read && !(r->vars = calloc(nvars ? nvars : 1, sizeof *r->vars))) r->short_read = true;
    for (uint64_t v = 0; v < nvars && !r->short_read; v++) walk_var(r, dimlen, ndims, &e);
    if (e.nrecvars == 1) e.recsize = e.one_rec;
    uint64_t end = e.fixed_end > r->pos ? e.fixed_end : r->pos;
    bool streaming = r->version != 5 && numrecs == STREAMING;
    if (e.nrecvars && numrecs && !streaming) {
        uint64_t rec_end = e.rec0_end + (numrecs - 1) * e.recsize;
        if (rec_end > end) end = rec_end;
    }
    return end;
}

dctk_status dctk_nc3_check_size(const char *path, dctk_nc3_var **vars, size_t *nvars) {
    if (vars) *vars = NULL, *nvars = 0;
    struct stat st;
    FILE *f = fopen(path, "rb");
    if (!f || fstat(fileno(f), &st) != 0) {
        if (f) fclose(f);
        return DCTK_FAIL(DCTK_ERR_IO, "%s: %s", path, strerror(errno));
    }
    rd r = {.f = f, .size = (uint64_t)st.st_size, .want_vars = vars != NULL};
    uint64_t magic = get_be(&r, 4);
    r.version = (int)(magic & 0xff);
    if ((magic >> 8) != 0x434446 || (r.version != 1 && r.version != 2 && r.version != 5)) {
        fclose(f);
        return DCTK_OK; /* netCDF-4: HDF5 notices its own truncation */
    }
    uint64_t want = expected_size(&r);
    fclose(f);
    if (r.short_read || want > r.size) free(r.vars);
    else if (vars) *vars = r.vars, *nvars = r.nvars;
    if (r.short_read)
        return DCTK_FAIL(DCTK_ERR_FORMAT, "%s: truncated or corrupt netCDF header (file has %llu bytes)", path,
                         (unsigned long long)r.size);
    if (want > r.size)
        return DCTK_FAIL(DCTK_ERR_FORMAT, "%s: truncated netCDF file: %llu bytes, the header describes %llu", path,
                         (unsigned long long)r.size, (unsigned long long)want);
    return DCTK_OK;
}
