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
 *   odd int8 per record: 1 if a block of a record read is not as the writer makes it
 *   (a FLOAT, 64-bit integer or DOUBLE block not of its type's size, a STRING empty or
 *   not ending in NUL, padding after a block not "~"), else 0 (bulk.decode_fast's test
 *   of the blocks, less the one against the descriptor's type)
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

enum {
    OK = 0, SHORT = 1, NUMPMID = 2, VSETS = 3, VALFMT = 4, BLOCK_OUTSIDE = 5, BLOCK_VLEN = 6,
    EVENTS = 7, ORDER = 8, COVERAGE = 9, TAIL = 10,
};

#define PM_TYPE_32 0
#define PM_TYPE_U32 1
#define PM_TYPE_64 2
#define PM_TYPE_U64 3
#define PM_TYPE_FLOAT 4
#define PM_TYPE_DOUBLE 5
#define PM_TYPE_STRING 6
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
static int read_record(const unsigned char *d, int64_t len, int64_t header, Col *cols, char *odd) {
    int64_t end = len - 4;
    *odd = 0;
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
        int32_t pad = -vlen & 3;
        expect_block += vlen + pad;
        if (expect_block > end) continue;       /* COVERAGE below */
        switch (CELL(cols[C_VTYPE], int32_t, i)) {
        case PM_TYPE_64: case PM_TYPE_U64: case PM_TYPE_DOUBLE:
            if (vlen != 12) *odd = 1;
            break;
        case PM_TYPE_FLOAT:
            if (vlen != 8) *odd = 1;
            break;
        case PM_TYPE_STRING:
            if (vlen == 4 || d[off + vlen - 1] != 0) *odd = 1;
            break;
        }
        for (int32_t k = 0; k < pad; k++)
            if (d[off + vlen + k] != '~') *odd = 1;
    }
    if (expect_block != end) return expect_block == pos ? TAIL : COVERAGE;
    return OK;
}

static PyObject *result_columns(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer buf, bounds;
    Py_ssize_t header;
    if (!PyArg_ParseTuple(args, "y*y*n", &buf, &bounds, &header)) return NULL;
    PyObject *result = NULL, *status = NULL, *rec_vset = NULL, *odd = NULL;
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
    odd = PyBytes_FromStringAndSize(NULL, count);
    if (status == NULL || rec_vset == NULL || odd == NULL) goto done;
    char *st = PyBytes_AS_STRING(status), *od = PyBytes_AS_STRING(odd);
    int64_t *rv = (int64_t *)PyBytes_AS_STRING(rec_vset);
    for (Py_ssize_t r = 0; r < count; r++) {
        Py_ssize_t vsets = cols[C_PMID].n, values = cols[C_INST].n;
        rv[r] = vsets;
        int s = read_record((const unsigned char *)buf.buf + at[r], at[r + 1] - at[r], header, cols, &od[r]);
        if (s < 0) goto done;
        st[r] = (char)s;
        if (s) {    /* declined: its rows are dropped, and it has no odd blocks to tell */
            od[r] = 0;
            for (int c = C_PMID; c <= C_VSETVAL; c++) cols[c].n = vsets;
            for (int c = C_INST; c < NCOLS; c++) cols[c].n = values;
        }
    }
    rv[count] = cols[C_PMID].n;
    if (col_reserve(&cols[C_VSETVAL], 1)) goto done;
    CELL(cols[C_VSETVAL], int64_t, cols[C_VSETVAL].n) = cols[C_INST].n;
    cols[C_VSETVAL].n++;
    result = PyTuple_New(3 + NCOLS);
    if (result == NULL) goto done;
    PyTuple_SET_ITEM(result, 0, status);
    PyTuple_SET_ITEM(result, 1, rec_vset);
    PyTuple_SET_ITEM(result, 2 + NCOLS, odd);
    status = rec_vset = odd = NULL;
    for (int c = 0; c < NCOLS; c++) {
        PyObject *b = PyBytes_FromStringAndSize(cols[c].at, cols[c].n * cols[c].size);
        if (b == NULL) { Py_CLEAR(result); goto done; }
        PyTuple_SET_ITEM(result, 2 + c, b);
    }
done:
    Py_XDECREF(status);
    Py_XDECREF(rec_vset);
    Py_XDECREF(odd);
    for (int c = 0; c < NCOLS; c++) PyMem_Free(cols[c].at);
    PyBuffer_Release(&buf);
    PyBuffer_Release(&bounds);
    return result;
}

/* One value as pmdumplog prints it (pmPrintValue; dump/text.py printed_value): 32- and
 * 64-bit integers in decimal, FLOAT "%.8g", DOUBLE "%.16g", a NaN "nan" or "-nan" by its
 * sign. An INSITU word is read by its metric's type (I32 signed, FLOAT its IEEE bits,
 * anything else unsigned, as format/values.py decode_insitu); a block by its own vtype
 * when its payload has that type's size. 0 where the value is not a number of those: the
 * caller prints it as bytes (bytes_text). */
/* Decimal digits of u, with a '-' first when negative; snprintf's "%llu"/"%lld" text. */
static int print_int(char *out, uint64_t u, int negative) {
    char digits[24];
    int n = 0;
    do { digits[n++] = (char)('0' + u % 10); u /= 10; } while (u);
    int len = 0;
    if (negative) out[len++] = '-';
    while (n) out[len++] = digits[--n];
    out[len] = 0;
    return len;
}

static int print_signed(char *out, int64_t v) {
    return v < 0 ? print_int(out, (uint64_t)0 - (uint64_t)v, 1) : print_int(out, (uint64_t)v, 0);
}

static int print_g(char *out, size_t size, double v, int digits) {
    if (isnan(v)) return snprintf(out, size, signbit(v) ? "-nan" : "nan");
    /* a whole number of fewer digits than the precision is its integer's digits ("%g"
     * drops a fraction of zeros and uses no exponent there); -0 keeps its sign */
    double limit = digits == 16 ? 1e16 : 1e8;
    if (v > -limit && v < limit && v == (double)(int64_t)v && !(v == 0 && signbit(v)))
        return print_signed(out, (int64_t)v);
    /* Python's dtoa: C's "%.*g" text, correctly rounded, several times faster than glibc's */
    char *text = PyOS_double_to_string(v, 'g', digits, 0, NULL);
    if (text == NULL) {
        PyErr_Clear();
        return snprintf(out, size, "%.*g", digits, v);
    }
    int n = snprintf(out, size, "%s", text);
    PyMem_Free(text);
    return n;
}

static int print_value(char *out, size_t size, const unsigned char *d, int64_t off, int32_t vtype,
                       int32_t vlen, uint32_t word, int32_t ptype) {
    if (vtype < 0) {                     /* INSITU */
        if (ptype == PM_TYPE_32) return print_signed(out, (int32_t)word);
        if (ptype == PM_TYPE_FLOAT) {
            float f;
            memcpy(&f, &word, 4);
            return print_g(out, size, (double)f, 8);
        }
        return print_int(out, word, 0);
    }
    const unsigned char *p = d + off + 4;
    int32_t n = vlen - 4;
    if (n == 8 && (vtype == PM_TYPE_64 || vtype == PM_TYPE_U64 || vtype == PM_TYPE_DOUBLE)) {
        uint64_t u = (uint64_t)be32(p) << 32 | be32(p + 4);
        if (vtype == PM_TYPE_64) return print_signed(out, (int64_t)u);
        if (vtype == PM_TYPE_U64) return print_int(out, u, 0);
        double x;
        memcpy(&x, &u, 8);
        return print_g(out, size, x, 16);
    }
    if (n == 4 && (vtype == PM_TYPE_32 || vtype == PM_TYPE_U32 || vtype == PM_TYPE_FLOAT)) {
        uint32_t w = be32(p);
        if (vtype == PM_TYPE_32) return print_signed(out, (int32_t)w);
        if (vtype == PM_TYPE_U32) return print_int(out, w, 0);
        float f;
        memcpy(&f, &w, 4);
        return print_g(out, size, (double)f, 8);
    }
    return 0;
}

/* The text being made: bytes, UTF-8 where a piece is not ASCII (wide). */
typedef struct {
    char *at;
    Py_ssize_t len, cap;
    int wide;
} Text;

static int text_reserve(Text *t, Py_ssize_t more) {
    if (t->len + more <= t->cap) return 0;
    Py_ssize_t cap = t->cap ? t->cap : 1 << 16;
    while (cap < t->len + more) cap *= 2;
    char *at = PyMem_Realloc(t->at, (size_t)cap);
    if (at == NULL) { PyErr_NoMemory(); return -1; }
    t->at = at;
    t->cap = cap;
    return 0;
}

static int text_put(Text *t, const char *s, Py_ssize_t n) {
    if (text_reserve(t, n)) return -1;
    memcpy(t->at + t->len, s, (size_t)n);
    t->len += n;
    return 0;
}

/* a str piece: its characters as they are, or its UTF-8 (lone surrogates, which the
 * archive's names hold for bytes that are not UTF-8, kept as they are by surrogatepass) */
static int text_str(Text *t, PyObject *s) {
    if (!PyUnicode_Check(s)) {
        PyErr_SetString(PyExc_TypeError, "a piece of text is not a str");
        return -1;
    }
    if (PyUnicode_IS_ASCII(s)) return text_put(t, PyUnicode_DATA(s), PyUnicode_GET_LENGTH(s));
    PyObject *utf8 = PyUnicode_AsEncodedString(s, "utf-8", "surrogatepass");
    if (utf8 == NULL) return -1;
    int rc = text_put(t, PyBytes_AS_STRING(utf8), PyBytes_GET_SIZE(utf8));
    Py_DECREF(utf8);
    t->wide = 1;
    return rc;
}

/* A block's payload that is not a number, as pmdumplog prints it (dump/text.py value_text):
 * a string of a STRING metric in double quotes, its trailing NULs dropped, bytes 0x20-0x7e
 * but backslash as they are and all else as \\xHH (dump/escape.py escape_bytes); any other
 * bytes as lowercase hex in brackets. */
static int bytes_text(Text *t, const unsigned char *p, Py_ssize_t n, int quoted) {
    static const char HEX[] = "0123456789abcdef";
    if (text_reserve(t, 2 + 4 * n)) return -1;
    char *at = t->at + t->len;
    if (!quoted) {
        *at++ = '[';
        for (Py_ssize_t i = 0; i < n; i++) {
            *at++ = HEX[p[i] >> 4];
            *at++ = HEX[p[i] & 15];
        }
        *at++ = ']';
    } else {
        while (n > 0 && p[n - 1] == 0) n--;
        *at++ = '"';
        for (Py_ssize_t i = 0; i < n; i++) {
            if (p[i] >= 0x20 && p[i] < 0x7f && p[i] != 0x5c) {
                *at++ = (char)p[i];
            } else {
                *at++ = '\\';
                *at++ = 'x';
                *at++ = HEX[p[i] >> 4];
                *at++ = HEX[p[i] & 15];
            }
        }
        *at++ = '"';
    }
    t->len = at - t->at;
    return 0;
}

/* A template's characters (UTF-8 where it is not ASCII) and where the next slot starts. */
typedef struct {
    const char *at;
    Py_ssize_t len, pos;
    PyObject *utf8;     /* the encoded copy of a template that is not ASCII, or NULL */
} Template;

static int template_open(Template *tp, Text *t, PyObject *s) {
    tp->pos = 0;
    if (!PyUnicode_Check(s)) {
        PyErr_SetString(PyExc_TypeError, "a template is not a str");
        return -1;
    }
    if (PyUnicode_IS_ASCII(s)) {
        tp->at = PyUnicode_DATA(s);
        tp->len = PyUnicode_GET_LENGTH(s);
        return 0;
    }
    tp->utf8 = PyUnicode_AsEncodedString(s, "utf-8", "surrogatepass");
    if (tp->utf8 == NULL) return -1;
    tp->at = PyBytes_AS_STRING(tp->utf8);
    tp->len = PyBytes_GET_SIZE(tp->utf8);
    t->wide = 1;
    return 0;
}

/* The template's text up to its next "%s" (a "%%" written as "%"): 1 at a slot (passed),
 * 0 at the template's end, -1 on an error (a '%' before anything but '%' or 's'). */
static int template_next(Template *tp, Text *t) {
    for (;;) {
        const char *pct = memchr(tp->at + tp->pos, '%', (size_t)(tp->len - tp->pos));
        Py_ssize_t run = pct ? pct - (tp->at + tp->pos) : tp->len - tp->pos;
        if (text_put(t, tp->at + tp->pos, run)) return -1;
        tp->pos += run;
        if (pct == NULL) return 0;
        if (tp->pos + 1 < tp->len && tp->at[tp->pos + 1] == 's') { tp->pos += 2; return 1; }
        if (tp->pos + 1 < tp->len && tp->at[tp->pos + 1] == '%') {
            if (text_put(t, "%", 1)) return -1;
            tp->pos += 2;
            continue;
        }
        PyErr_SetString(PyExc_ValueError, "a template's '%' is neither \"%%\" nor \"%s\"");
        return -1;
    }
}

/* filled_text(buf, bounds, rec_vset, vset_val, word, vtype, vlen, boff, pmid, types,
 * fallback, heads, templates): the text of the records result_columns read from buf and
 * bounds (all of them), from those columns: for record r, heads[r], then templates[r] (a
 * str with a "%s" for each of the record's values and "%%" for a '%', as Python's %
 * reads it) with each value as pmdumplog prints it in its slot, in order. types: a dict of
 * pmID to the metric's type (fallback for a pmID not in it: the type an INSITU word is read
 * by; a STRING metric's blocks are strings). A template without a slot for each value, or
 * a value it cannot print (an event array, which a record result_columns reads never
 * holds), is a ValueError. */
static PyObject *filled_text(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer b[9];
    PyObject *types, *heads, *templates;
    int fallback;
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*y*y*y*O!iO!O!", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5],
                          &b[6], &b[7], &b[8], &PyDict_Type, &types, &fallback, &PyList_Type, &heads,
                          &PyList_Type, &templates))
        return NULL;
    PyObject *result = NULL;
    Text t = {NULL, 0, 0, 0};
    Template tp = {NULL, 0, 0, NULL};
    const unsigned char *d = b[0].buf;
    const int64_t *bounds = b[1].buf, *rec_vset = b[2].buf, *vset_val = b[3].buf, *boff = b[7].buf;
    const uint32_t *word = b[4].buf;
    const int32_t *vtype = b[5].buf, *vlen = b[6].buf;
    const uint32_t *pmid = b[8].buf;
    Py_ssize_t records = b[1].len / 8 - 1, vsets = b[3].len / 8 - 1, values = b[4].len / 4;
    if (records < 0 || vsets < 0 || b[2].len != 8 * (records + 1) || b[8].len != 4 * vsets ||
        b[5].len != 4 * values || b[6].len != 4 * values || b[7].len != 8 * values ||
        rec_vset[0] != 0 || rec_vset[records] != vsets || vset_val[0] != 0 || vset_val[vsets] != values ||
        PyList_GET_SIZE(heads) != records || PyList_GET_SIZE(templates) != records) {
        PyErr_SetString(PyExc_ValueError, "columns of different lengths");
        goto done;
    }
    char number[64];
    for (Py_ssize_t r = 0; r < records; r++) {
        if (rec_vset[r + 1] < rec_vset[r] || rec_vset[r + 1] > vsets || bounds[r + 1] < bounds[r] ||
            bounds[r + 1] > b[0].len) {
            PyErr_SetString(PyExc_ValueError, "rows or bounds out of order");
            goto done;
        }
        Py_CLEAR(tp.utf8);
        if (text_str(&t, PyList_GET_ITEM(heads, r)) || template_open(&tp, &t, PyList_GET_ITEM(templates, r)))
            goto done;
        for (int64_t k = rec_vset[r]; k < rec_vset[r + 1]; k++) {
            if (vset_val[k + 1] < vset_val[k] || vset_val[k + 1] > values) {
                PyErr_SetString(PyExc_ValueError, "rows out of order");
                goto done;
            }
            int32_t ptype = fallback;      /* the metric's type: it reads an INSITU word */
            int string = 0;                 /* a STRING metric: its blocks print as strings */
            if (vset_val[k + 1] > vset_val[k]) {
                PyObject *key = PyLong_FromUnsignedLong(pmid[k]);
                if (key == NULL) goto done;
                PyObject *known = PyDict_GetItemWithError(types, key);
                Py_DECREF(key);
                if (known != NULL) {
                    if (!PyLong_Check(known)) {     /* an int: no Python code runs while a
                                                       template's characters are borrowed */
                        PyErr_SetString(PyExc_TypeError, "a metric's type is not an int");
                        goto done;
                    }
                    long type = PyLong_AsLong(known);
                    if (type == -1 && PyErr_Occurred()) goto done;
                    ptype = (int32_t)type;
                    string = type == PM_TYPE_STRING;
                } else if (PyErr_Occurred()) {
                    goto done;
                }
            }
            for (int64_t i = vset_val[k]; i < vset_val[k + 1]; i++) {
                int slot = template_next(&tp, &t);
                if (slot <= 0) {
                    if (slot == 0) PyErr_SetString(PyExc_ValueError, "a template has fewer slots than its record's values");
                    goto done;
                }
                int n = 0, inside = vtype[i] < 0 || (boff[i] >= 0 && vlen[i] >= 4 &&
                                                     bounds[r] + boff[i] + vlen[i] <= bounds[r + 1]);
                if (inside)
                    n = print_value(number, sizeof number, d + bounds[r], boff[i], vtype[i], vlen[i],
                                    word[i], ptype);
                if (n > 0) {
                    if (text_put(&t, number, n)) goto done;
                } else if (inside && vtype[i] >= 0 && vtype[i] != PM_TYPE_EVENT &&
                           vtype[i] != PM_TYPE_HIGHRES_EVENT) {
                    if (bytes_text(&t, d + bounds[r] + boff[i] + 4, vlen[i] - 4, string)) goto done;
                } else {
                    PyErr_Format(PyExc_ValueError, "value %lld is not printed here", (long long)i);
                    goto done;
                }
            }
        }
        int end = template_next(&tp, &t);
        if (end != 0) {
            if (end > 0) PyErr_SetString(PyExc_ValueError, "a template has more slots than its record's values");
            goto done;
        }
    }
    if (t.wide) {
        result = PyUnicode_DecodeUTF8(t.at ? t.at : "", t.len, "surrogatepass");
    } else {
        result = PyUnicode_New(t.len, 127);
        if (result != NULL && t.len) memcpy(PyUnicode_DATA(result), t.at, (size_t)t.len);
    }
done:
    Py_XDECREF(tp.utf8);
    PyMem_Free(t.at);
    for (int j = 0; j < 9; j++) PyBuffer_Release(&b[j]);
    return result;
}

static PyMethodDef methods[] = {
    {"result_columns", result_columns, METH_VARARGS,
     "The value sets and values of a run of result records, as columns."},
    {"filled_text", filled_text, METH_VARARGS,
     "The text of result_columns' records: each record's head and layout pieces with its values printed."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_resultcols",
                                    "The compiled kernel of the result decoder's column form.", -1, methods};

PyMODINIT_FUNC PyInit__resultcols(void) { return PyModule_Create(&module); }
