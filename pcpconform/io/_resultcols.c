/* The compiled kernel of the result decoder's column form (pcpconform/io/result_kernel.py).
 *
 * result_columns(buf, bounds, header) reads a run of pmResult records laid end to end in
 * buf (record r is buf[bounds[r]:bounds[r + 1]], each from its length word to its trailer;
 * bounds an int64 buffer) and returns their value sets and values as columns, without a
 * Python object per value set. header is the offset of the first value set from the length
 * word (16 in v2, 20 in v3). A record is read only where it has the layout libpcp's writer
 * gives every record: value sets inside the record, valfmt INSITU, DPTR or SPTR, each DPTR
 * value naming its own block, the blocks back to back in the order of their values from the
 * value sets' end to the trailer, no event arrays. Any other record gets a nonzero status
 * (the reason, numbered as result_kernel.KernelReason) and no rows: the caller decodes it
 * with the reference decoder, which reports what is wrong with it.
 *
 * Returned: a tuple of bytes objects, native byte order:
 *   status   int8  per record (0: read)
 *   rec_vset int64 per record + 1: the record's value sets are rows rec_vset[r]..[r + 1]
 *   pmid uint32, numval int32, valfmt int32 (-1 where numval <= 0) per value set
 *   vset_val int64 per value set + 1: the value set's values are rows vset_val[k]..[k + 1]
 *   inst int32, word uint32 per value
 *   vtype int32 (-1 INSITU), vlen int32 (0 INSITU), boff int64 (-1 INSITU; the block's
 *   byte offset from the record's length word) per value
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

enum {
    OK = 0, SHORT = 1, NUMPMID = 2, VSETS = 3, VALFMT = 4, BLOCK_OUTSIDE = 5, BLOCK_VLEN = 6,
    EVENTS = 7, ORDER = 8, COVERAGE = 9, TAIL = 10,
};

#define PM_TYPE_EVENT 9
#define PM_TYPE_HIGHRES_EVENT 10

static inline uint32_t be32(const unsigned char *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

/* A growable column of fixed-size cells. */
typedef struct {
    char *at;
    Py_ssize_t n, cap, size;
} Col;

static int col_reserve(Col *c, Py_ssize_t more) {
    if (c->n + more <= c->cap) return 0;
    Py_ssize_t cap = c->cap ? c->cap : 1024;
    while (cap < c->n + more) cap *= 2;
    char *at = PyMem_Realloc(c->at, (size_t)(cap * c->size));
    if (at == NULL) { PyErr_NoMemory(); return -1; }
    c->at = at;
    c->cap = cap;
    return 0;
}

#define CELL(c, T, i) (((T *)(c).at)[i])

enum { C_PMID, C_NUMVAL, C_VALFMT, C_VSETVAL, C_INST, C_WORD, C_VTYPE, C_VLEN, C_BOFF, NCOLS };
static const Py_ssize_t SIZES[NCOLS] = {4, 4, 4, 8, 4, 4, 4, 4, 8};

/* Read one record into the columns; its status. On a nonzero status the caller drops the
 * rows this record added. */
static int read_record(const unsigned char *d, int64_t len, int64_t header, Col *cols) {
    int64_t end = len - 4;
    if (end < header) return SHORT;
    int64_t pos = header;
    int32_t numpmid = (int32_t)be32(d + header - 4);
    if (numpmid < 0 || (int64_t)numpmid * 8 > end - pos) return NUMPMID;
    if (col_reserve(&cols[C_PMID], numpmid) || col_reserve(&cols[C_NUMVAL], numpmid) ||
        col_reserve(&cols[C_VALFMT], numpmid) || col_reserve(&cols[C_VSETVAL], numpmid))
        return -1;
    int64_t expect_block = -1;     /* where the next block must start; set after the value sets */
    Py_ssize_t first_value = cols[C_INST].n;
    for (int32_t k = 0; k < numpmid; k++) {
        if (pos + 8 > end) return VSETS;
        uint32_t pmid = be32(d + pos);
        int32_t numval = (int32_t)be32(d + pos + 4);
        pos += 8;
        Py_ssize_t v = cols[C_PMID].n++;
        cols[C_NUMVAL].n++; cols[C_VALFMT].n++; cols[C_VSETVAL].n++;
        CELL(cols[C_PMID], uint32_t, v) = pmid;
        CELL(cols[C_NUMVAL], int32_t, v) = numval;
        CELL(cols[C_VALFMT], int32_t, v) = -1;
        CELL(cols[C_VSETVAL], int64_t, v) = cols[C_INST].n;
        if (numval <= 0) continue;
        if (pos + 4 + 8 * (int64_t)numval > end) return VSETS;
        uint32_t valfmt = be32(d + pos);
        if (valfmt > 2) return VALFMT;
        CELL(cols[C_VALFMT], int32_t, v) = (int32_t)valfmt;
        for (int c = C_INST; c < NCOLS; c++)
            if (col_reserve(&cols[c], numval)) return -1;
        const unsigned char *p = d + pos + 4;
        for (int32_t j = 0; j < numval; j++, p += 8) {
            Py_ssize_t i = cols[C_INST].n++;
            cols[C_WORD].n++; cols[C_VTYPE].n++; cols[C_VLEN].n++; cols[C_BOFF].n++;
            uint32_t word = be32(p + 4);
            CELL(cols[C_INST], int32_t, i) = (int32_t)be32(p);
            CELL(cols[C_WORD], uint32_t, i) = word;
            if (valfmt == 0) {
                CELL(cols[C_VTYPE], int32_t, i) = -1;
                CELL(cols[C_VLEN], int32_t, i) = 0;
                CELL(cols[C_BOFF], int64_t, i) = -1;
                continue;
            }
            int64_t off = 4 * (int64_t)word - 8;
            if (off < 0 || off + 4 > end) return BLOCK_OUTSIDE;
            uint32_t head = be32(d + off);
            int32_t vtype = (int32_t)(head >> 24), vlen = (int32_t)(head & 0xFFFFFF);
            if (vlen < 4 || off + vlen > end) return BLOCK_VLEN;
            if (vtype == PM_TYPE_EVENT || vtype == PM_TYPE_HIGHRES_EVENT) return EVENTS;
            CELL(cols[C_VTYPE], int32_t, i) = vtype;
            CELL(cols[C_VLEN], int32_t, i) = vlen;
            CELL(cols[C_BOFF], int64_t, i) = off;
        }
        pos += 4 + 8 * (int64_t)numval;
    }
    /* the blocks: back to back, in the order of their values, from here to the trailer */
    expect_block = pos;
    for (Py_ssize_t i = first_value; i < cols[C_INST].n; i++) {
        int64_t off = CELL(cols[C_BOFF], int64_t, i);
        if (off < 0) continue;
        if (off != expect_block) return ORDER;
        int32_t vlen = CELL(cols[C_VLEN], int32_t, i);
        expect_block += vlen + (-vlen & 3);
    }
    if (expect_block != end) return expect_block == pos ? TAIL : COVERAGE;
    return OK;
}

static PyObject *result_columns(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer buf, bounds;
    Py_ssize_t header;
    if (!PyArg_ParseTuple(args, "y*y*n", &buf, &bounds, &header)) return NULL;
    PyObject *result = NULL, *status = NULL, *rec_vset = NULL;
    Col cols[NCOLS];
    memset(cols, 0, sizeof cols);
    for (int c = 0; c < NCOLS; c++) cols[c].size = SIZES[c];
    Py_ssize_t count = bounds.len / 8 - 1;
    if (bounds.len % 8 || count < 0 || header < 8) {
        PyErr_SetString(PyExc_ValueError, "bounds are not an int64 buffer of records + 1 offsets");
        goto done;
    }
    const int64_t *at = bounds.buf;
    for (Py_ssize_t r = 0; r < count; r++) {
        if (at[r] < 0 || at[r + 1] < at[r] || at[r + 1] > buf.len) {
            PyErr_SetString(PyExc_ValueError, "a record's bounds are outside the buffer");
            goto done;
        }
    }
    status = PyBytes_FromStringAndSize(NULL, count);
    rec_vset = PyBytes_FromStringAndSize(NULL, 8 * (count + 1));
    if (status == NULL || rec_vset == NULL) goto done;
    char *st = PyBytes_AS_STRING(status);
    int64_t *rv = (int64_t *)PyBytes_AS_STRING(rec_vset);
    for (Py_ssize_t r = 0; r < count; r++) {
        Py_ssize_t vsets = cols[C_PMID].n, values = cols[C_INST].n;
        rv[r] = vsets;
        int s = read_record((const unsigned char *)buf.buf + at[r], at[r + 1] - at[r], header, cols);
        if (s < 0) goto done;
        st[r] = (char)s;
        if (s) {    /* declined: its rows are dropped */
            for (int c = C_PMID; c <= C_VSETVAL; c++) cols[c].n = vsets;
            for (int c = C_INST; c < NCOLS; c++) cols[c].n = values;
        }
    }
    rv[count] = cols[C_PMID].n;
    if (col_reserve(&cols[C_VSETVAL], 1)) goto done;
    CELL(cols[C_VSETVAL], int64_t, cols[C_VSETVAL].n) = cols[C_INST].n;
    cols[C_VSETVAL].n++;
    result = PyTuple_New(2 + NCOLS);
    if (result == NULL) goto done;
    PyTuple_SET_ITEM(result, 0, status);
    PyTuple_SET_ITEM(result, 1, rec_vset);
    status = rec_vset = NULL;
    for (int c = 0; c < NCOLS; c++) {
        PyObject *b = PyBytes_FromStringAndSize(cols[c].at, cols[c].n * cols[c].size);
        if (b == NULL) { Py_CLEAR(result); goto done; }
        PyTuple_SET_ITEM(result, 2 + c, b);
    }
done:
    Py_XDECREF(status);
    Py_XDECREF(rec_vset);
    for (int c = 0; c < NCOLS; c++) PyMem_Free(cols[c].at);
    PyBuffer_Release(&buf);
    PyBuffer_Release(&bounds);
    return result;
}

static PyMethodDef methods[] = {
    {"result_columns", result_columns, METH_VARARGS,
     "The value sets and values of a run of result records, as columns."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_resultcols",
                                    "The compiled kernel of the result decoder's column form.", -1, methods};

PyMODINIT_FUNC PyInit__resultcols(void) { return PyModule_Create(&module); }
