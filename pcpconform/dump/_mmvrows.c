/* The lines of a run of clean MMV value rows, as JSON Lines or as the text listing.
 *
 * The compiled side of the registered fast path "dump.mmv-values"
 * (pcpconform/dump/mmv_kernel.py): it writes, byte for byte, what the column path of
 * pcpconform/dump/mmv_blocks.py (_Values.jsonl and _Values.text, the reference) writes for
 * rows that path calls clean: a known metric of an MMV type, an instance entry where the
 * metric has an indom, a terminated string slot for a STRING value, no positive ELAPSED
 * extra. The caller checks that; this module reads only inside the bytes it is given and
 * raises ValueError for a row that leaves them.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#define VALUE_SIZE 32
#define STRING_SIZE 256
#define CHUNK (1 << 15)     /* lines are handed over in chunks of about this many bytes,
                               below malloc's mmap threshold, so that the memory is reused
                               and stays in the cache, not faulted in afresh */

enum { T_NOSUPPORT = -1, T_I32 = 0, T_U32 = 1, T_I64 = 2, T_U64 = 3, T_FLOAT = 4,
       T_DOUBLE = 5, T_STRING = 6, T_ELAPSED = 9 };   /* pcpconform.mmv.model */

typedef struct { char *at; Py_ssize_t len, cap; } Out;

static __attribute__((noinline)) int grow_slow(Out *o, Py_ssize_t more) {
    Py_ssize_t cap = o->cap ? o->cap : 4096;
    while (cap < o->len + more) cap *= 2;
    char *at = PyMem_Realloc(o->at, (size_t)cap);
    if (at == NULL) { PyErr_NoMemory(); return -1; }
    o->at = at; o->cap = cap;
    return 0;
}

/* inlined, so that the pieces of constant length are copied without a call */
static inline __attribute__((always_inline)) int grow(Out *o, Py_ssize_t more) {
    return o->len + more <= o->cap ? 0 : grow_slow(o, more);
}

static inline __attribute__((always_inline)) int put(Out *o, const char *s, Py_ssize_t n) {
    if (grow(o, n) < 0) return -1;
    memcpy(o->at + o->len, s, (size_t)n);
    o->len += n;
    return 0;
}

#define PUTS(o, lit) put((o), (lit), (Py_ssize_t)(sizeof(lit) - 1))

/* an ASCII str (every text the dump writes is escaped to ASCII) */
static int put_str(Out *o, PyObject *s) {
    Py_ssize_t n;
    const char *u = PyUnicode_AsUTF8AndSize(s, &n);
    return u == NULL ? -1 : put(o, u, n);
}

static const char PAIRS[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

static inline int decimal_digits(unsigned long long v) {
    int n = 1;
    for (;;) {
        if (v < 10) return n;
        if (v < 100) return n + 1;
        if (v < 1000) return n + 2;
        if (v < 10000) return n + 3;
        v /= 10000;
        n += 4;
    }
}

/* decimal digits by hand, two at a time, straight into place (counted first): snprintf
 * costs more than the rest of a line, a line has seven integers, and digits put in a
 * scratch buffer and copied from it stall the load on the stores just made */
static inline int put_uint(Out *o, unsigned long long v) {
    int n = decimal_digits(v);
    if (grow(o, n) < 0) return -1;
    char *w = o->at + o->len + n;
    o->len += n;
    while (v >= 100) {
        unsigned r = (unsigned)(v % 100);
        v /= 100;
        w -= 2;
        memcpy(w, PAIRS + 2 * r, 2);
    }
    if (v >= 10) memcpy(w - 2, PAIRS + 2 * v, 2);
    else w[-1] = (char)('0' + v);
    return 0;
}

static int put_int(Out *o, long long v) {
    if (v >= 0) return put_uint(o, (unsigned long long)v);
    if (PUTS(o, "-") < 0) return -1;
    return put_uint(o, 0ULL - (unsigned long long)v);
}

static const char HEX[] = "0123456789abcdef";

static char HEX_PAIRS[512];       /* each byte's two hex digits, made when the module loads */

/* bytes hi..lo (hi first) as lowercase hex */
static int put_hex(Out *o, const unsigned char *b, int first, int last, int step) {
    if (grow(o, 16) < 0) return -1;
    char *w = o->at + o->len;
    for (int k = first; k != last + step; k += step, w += 2) memcpy(w, HEX_PAIRS + 2 * b[k], 2);
    o->len = w - o->at;
    return 0;
}

/* escape_bytes (0x20-0x7E but backslash as themselves, else \xHH), then, for JSON, the
 * ASCII encoder's escapes of '"' and '\\'; runs of bytes kept as they are (most text) are
 * copied whole */
static int put_escaped(Out *o, const unsigned char *b, Py_ssize_t n, int json) {
    if (grow(o, 5 * n) < 0) return -1;
    char *w = o->at + o->len;
    Py_ssize_t k = 0;
    while (k < n) {
        Py_ssize_t run = k;
        while (run < n && b[run] >= 0x20 && b[run] < 0x7F && b[run] != '\\' && b[run] != '"') run++;
        memcpy(w, b + k, (size_t)(run - k));
        w += run - k;
        if (run == n) break;
        unsigned char c = b[run];
        if (c == '"') {
            if (json) *w++ = '\\';
            *w++ = '"';
        } else {
            *w++ = '\\';
            if (json) *w++ = '\\';
            *w++ = 'x'; *w++ = HEX[c >> 4]; *w++ = HEX[c & 15];
        }
        k = run + 1;
    }
    o->len = w - o->at;
    return 0;
}

/* Python's format(x, "f"), and printf's "-nan" for a NaN with its sign bit. Below 2^33,
 * x = m / 2^s exactly (m of 53 bits), so x * 10^6 = m * 10^6 / 2^s is exact in 128 bits and
 * is rounded to an integer half to even, as Python's correctly rounded conversion does;
 * larger numbers take Python's own conversion. */
static int put_fixed(Out *o, double x) {
    if (isnan(x)) return signbit(x) ? PUTS(o, "-nan") : PUTS(o, "nan");
    double ax = fabs(x);
    if (!(ax < 8589934592.0)) {
        char *s = PyOS_double_to_string(x, 'f', 6, 0, NULL);
        if (s == NULL) return -1;
        int rc = put(o, s, (Py_ssize_t)strlen(s));
        PyMem_Free(s);
        return rc;
    }
    int k;
    double f = frexp(ax, &k);
    unsigned long long m = (unsigned long long)ldexp(f, 53), q = 0;
    int shift = 53 - k;                       /* at least 20 */
    if (shift <= 120) {                       /* else x * 10^6 < 2^-47: rounds to 0 */
        unsigned __int128 p = (unsigned __int128)m * 1000000u, whole = p >> shift;
        unsigned __int128 rem = p - (whole << shift), half = (unsigned __int128)1 << (shift - 1);
        if (rem > half || (rem == half && (whole & 1))) whole++;
        q = (unsigned long long)whole;
    }
    char buf[40], *w = buf + sizeof buf;
    for (int d = 0; d < 6; d++) { *--w = (char)('0' + q % 10); q /= 10; }
    *--w = '.';
    do { *--w = (char)('0' + q % 10); q /= 10; } while (q);
    if (signbit(x)) *--w = '-';
    return put(o, w, buf + sizeof buf - w);
}

static long long i64_at(const unsigned char *p) { int64_t v; memcpy(&v, p, 8); return v; }
static unsigned long long u64_at(const unsigned char *p) { uint64_t v; memcpy(&v, p, 8); return v; }

typedef struct {
    int ready, type, singular;                       /* ready: read from the list (a call's
                                                        rows name a few of its metrics) */
    const char *json_at, *head_at, *name_at;          /* the UTF-8 of json_part, text_head and
                                                         text_name, borrowed from the list */
    Py_ssize_t json_len, head_len, name_len;
} Metric;

/* metrics[k] read into table[k] the first time a row names it */
static const Metric *metric_at(Metric *table, PyObject *metrics, Py_ssize_t k) {
    Metric *t = &table[k];
    if (t->ready) return t;
    PyObject *m = PyList_GET_ITEM(metrics, k);
    /* exact types: nothing read here may run Python code (the texts are borrowed) */
    if (!PyTuple_Check(m) || PyTuple_GET_SIZE(m) != 5 || !PyLong_CheckExact(PyTuple_GET_ITEM(m, 0))
        || !PyBool_Check(PyTuple_GET_ITEM(m, 1)) || !PyUnicode_CheckExact(PyTuple_GET_ITEM(m, 2))
        || !PyUnicode_CheckExact(PyTuple_GET_ITEM(m, 3)) || !PyUnicode_CheckExact(PyTuple_GET_ITEM(m, 4))) {
        PyErr_SetString(PyExc_TypeError, "a metric is (type, singular, json_part, text_head, text_name)"
                                         " as int, bool and three str");
        return NULL;
    }
    t->type = (int)PyLong_AsLong(PyTuple_GET_ITEM(m, 0));
    t->singular = PyTuple_GET_ITEM(m, 1) == Py_True;
    if (PyErr_Occurred()) return NULL;
    t->json_at = PyUnicode_AsUTF8AndSize(PyTuple_GET_ITEM(m, 2), &t->json_len);
    t->head_at = PyUnicode_AsUTF8AndSize(PyTuple_GET_ITEM(m, 3), &t->head_len);
    t->name_at = PyUnicode_AsUTF8AndSize(PyTuple_GET_ITEM(m, 4), &t->name_len);
    if (t->json_at == NULL || t->head_at == NULL || t->name_at == NULL) return NULL;
    t->ready = 1;
    return t;
}

static const char *token(int t) {
    switch (t) {
    case T_NOSUPPORT: return "nosupport"; case T_I32: return "32"; case T_U32: return "u32";
    case T_I64: return "64"; case T_U64: return "u64"; case T_FLOAT: return "float";
    case T_DOUBLE: return "double"; case T_STRING: return "string"; case T_ELAPSED: return "elapsed";
    }
    return NULL;
}

/* the index of key in the sorted keys, or -1 */
static Py_ssize_t find(const uint64_t *keys, Py_ssize_t n, uint64_t key) {
    Py_ssize_t lo = 0, hi = n;
    while (lo < hi) {
        Py_ssize_t mid = lo + (hi - lo) / 2;
        if (keys[mid] < key) lo = mid + 1; else hi = mid;
    }
    return lo < n && keys[lo] == key ? lo : -1;
}

typedef struct {
    const unsigned char *data; Py_ssize_t size;
    const uint64_t *keys; Py_ssize_t nkeys;
    const int64_t *ids;
    PyObject *names, *texts;
    int sentinel;
} Rows;

/* the value's text of a STRING row: its slot up to the NUL */
static int slot(const Rows *r, long long at, const unsigned char **text, Py_ssize_t *len) {
    if (at < 0 || at + STRING_SIZE > r->size) {
        PyErr_Format(PyExc_ValueError, "string offset %lld is not a slot in the data", at);
        return -1;
    }
    const unsigned char *s = r->data + at;
    const unsigned char *nul = memchr(s, 0, STRING_SIZE);
    if (nul == NULL) {
        PyErr_Format(PyExc_ValueError, "string slot at %lld has no NUL", at);
        return -1;
    }
    *text = s; *len = nul - s;
    return 0;
}

static int is_empty(const Metric *m, const unsigned char *atom, Py_ssize_t slen) {
    switch (m->type) {
    case T_FLOAT: { float f; memcpy(&f, atom, 4); return isnan(f); }
    case T_DOUBLE: { double d; memcpy(&d, atom, 8); return isnan(d); }
    case T_STRING: return slen == 0;
    case T_NOSUPPORT: return 0;
    }
    for (int k = 0; k < 8; k++) if (atom[k] != 0xFF) return 0;
    return 1;
}

static int int_text(Out *o, int type, const unsigned char *atom) {
    switch (type) {
    case T_I32: { int32_t v; memcpy(&v, atom, 4); return put_int(o, v); }
    case T_U32: { uint32_t v; memcpy(&v, atom, 4); return put_uint(o, v); }
    case T_U64: return put_uint(o, u64_at(atom));
    default: return put_int(o, i64_at(atom));
    }
}

static int json_row(Out *o, const Rows *r, Py_ssize_t n, Py_ssize_t off, const Metric *m,
                    Py_ssize_t inst) {
    const unsigned char *row = r->data + off, *text = NULL;
    Py_ssize_t slen = 0;
    long long extra = i64_at(row + 8);
    if (m->type == T_STRING && slot(r, extra, &text, &slen) < 0) return -1;
    if (PUTS(o, "{\"kind\":\"value\",\"index\":") < 0 || put_int(o, n) < 0
        || PUTS(o, ",\"offset\":") < 0 || put_int(o, off) < 0
        || PUTS(o, ",\"metric_offset\":") < 0 || put_uint(o, u64_at(row + 16)) < 0
        || PUTS(o, ",\"instance_offset\":") < 0 || put_uint(o, u64_at(row + 24)) < 0
        || PUTS(o, ",\"atom\":\"") < 0 || put_hex(o, row, 0, 7, 1) < 0
        || PUTS(o, "\",\"extra\":\"") < 0 || put_int(o, extra) < 0 || PUTS(o, "\",") < 0
        || put(o, m->json_at, m->json_len) < 0 || PUTS(o, ",\"instance\":") < 0)
        return -1;
    if (m->singular) {
        if (PUTS(o, "null,\"instance_name\":null") < 0) return -1;
    } else if (put_int(o, r->ids[inst]) < 0 || PUTS(o, ",\"instance_name\":") < 0
               || put_str(o, PyList_GET_ITEM(r->names, inst)) < 0) {
        return -1;
    }
    if (m->type == T_STRING && (PUTS(o, ",\"string_offset\":") < 0 || put_int(o, extra) < 0))
        return -1;
    /* the type's members and the tagged value's head, one copy (tok is known) */
#define TYPED(t) ",\"type\":\"" t "\",\"value\":{\"type\":\"" t "\",\"value\":\""
    int rc;
    switch (m->type) {
    case T_NOSUPPORT: rc = PUTS(o, ",\"type\":\"nosupport\",\"value\":null"); break;
    case T_FLOAT:
        rc = PUTS(o, TYPED("float") "0x") < 0 || put_hex(o, row, 3, 0, -1) < 0 ? -1 : PUTS(o, "\"}");
        break;
    case T_DOUBLE:
        rc = PUTS(o, TYPED("double") "0x") < 0 || put_hex(o, row, 7, 0, -1) < 0 ? -1 : PUTS(o, "\"}");
        break;
    case T_STRING:
        rc = PUTS(o, TYPED("string")) < 0 || put_escaped(o, text, slen, 1) < 0 ? -1 : PUTS(o, "\"}");
        break;
    case T_I32: rc = PUTS(o, TYPED("32")) < 0 || int_text(o, m->type, row) < 0 ? -1 : PUTS(o, "\"}"); break;
    case T_U32: rc = PUTS(o, TYPED("u32")) < 0 || int_text(o, m->type, row) < 0 ? -1 : PUTS(o, "\"}"); break;
    case T_I64: rc = PUTS(o, TYPED("64")) < 0 || int_text(o, m->type, row) < 0 ? -1 : PUTS(o, "\"}"); break;
    case T_U64: rc = PUTS(o, TYPED("u64")) < 0 || int_text(o, m->type, row) < 0 ? -1 : PUTS(o, "\"}"); break;
    default:                            /* ELAPSED (the caller refuses any other type) */
        rc = PUTS(o, TYPED("elapsed")) < 0 || int_text(o, m->type, row) < 0 ? -1 : PUTS(o, "\"}");
    }
#undef TYPED
    if (rc < 0) return -1;
    if (r->sentinel && is_empty(m, row, slen) && PUTS(o, ",\"sentinel\":true") < 0) return -1;
    return PUTS(o, "}");
}

/* "  [item/offset] name" */
static int text_row(Out *o, Py_ssize_t off, const Metric *m) {
    return put(o, m->head_at, m->head_len) < 0 || put_int(o, off) < 0 || PUTS(o, "] ") < 0
           ? -1 : put(o, m->name_at, m->name_len);
}

static int text_tail(Out *o, const Rows *r, const unsigned char *row, const Metric *m,
                     Py_ssize_t inst) {
    const unsigned char *text = NULL;
    Py_ssize_t slen = 0;
    long long extra = i64_at(row + 8);
    if (m->type == T_STRING && slot(r, extra, &text, &slen) < 0) return -1;
    if (!m->singular && inst >= 0 && put_str(o, PyList_GET_ITEM(r->texts, inst)) < 0) return -1;
    if (r->sentinel && is_empty(m, row, slen)) return PUTS(o, " = (no value: sentinel)");
    switch (m->type) {
    case T_NOSUPPORT: return PUTS(o, " Unknown type nosupport");
    case T_FLOAT: { float f; memcpy(&f, row, 4); return PUTS(o, " = ") < 0 ? -1 : put_fixed(o, f); }
    case T_DOUBLE: { double d; memcpy(&d, row, 8); return PUTS(o, " = ") < 0 ? -1 : put_fixed(o, d); }
    case T_STRING:
        return PUTS(o, " = \"") < 0 || put_escaped(o, text, slen, 0) < 0 ? -1 : PUTS(o, "\"");
    case T_ELAPSED:
        return PUTS(o, " = ") < 0 || int_text(o, m->type, row) < 0 || PUTS(o, " (value=") < 0
               || int_text(o, m->type, row) < 0 || PUTS(o, "/extra=") < 0 || put_int(o, extra) < 0
               ? -1 : PUTS(o, ")");
    }
    return PUTS(o, " = ") < 0 ? -1 : int_text(o, m->type, row);
}

/* value_lines(text, data, base, lo, hi, sentinel, pos, metrics, keys, ids, names, texts)
 *
 * text: the listing's lines (else JSON Lines); data: the file's bytes; base: the values
 * section's offset; rows lo..hi; sentinel: the file has the SENTINEL flag; pos: each row's
 * index into metrics (a buffer of intp, one per row of the section); metrics: per metric
 * (type, singular, json_part, text_head "  [item/", text_name); keys: the instance entries' offsets,
 * sorted (a buffer of uint64); ids (a buffer of int64; empty for the listing), names,
 * texts: per key, the instance's id, its name as JSON and the listing's part. Returns the
 * lines in chunks, each of lines joined by newlines, without a final one.
 */
/* the buffer's lines as one more chunk */
static int flush(Out *o, PyObject *chunks) {
    PyObject *chunk = PyUnicode_New(o->len, 127);
    if (chunk == NULL) return -1;
    memcpy(PyUnicode_DATA(chunk), o->at, (size_t)o->len);
    int rc = PyList_Append(chunks, chunk);
    Py_DECREF(chunk);
    o->len = 0;
    return rc;
}

/* before a line: the buffer handed over when full, else a newline after the line before */
static int line_break(Out *o, PyObject *chunks) {
    if (o->len >= CHUNK && flush(o, chunks) < 0) return -1;
    return o->len > 0 ? PUTS(o, "\n") : 0;
}

/* the chunks, with the buffer's last lines (a new reference), or NULL */
static PyObject *last_chunk(Out *o, PyObject *chunks) {
    if (o->len > 0 && flush(o, chunks) < 0) return NULL;
    Py_INCREF(chunks);
    return chunks;
}

static PyObject *value_lines(PyObject *Py_UNUSED(self), PyObject *args) {
    int text, sentinel;
    Py_buffer data, pos, keys, ids;
    Py_ssize_t base, lo, hi;
    PyObject *metrics, *names, *texts, *result = NULL;
    if (!PyArg_ParseTuple(args, "py*nnnpy*O!y*y*O!O!", &text, &data, &base, &lo, &hi, &sentinel,
                          &pos, &PyList_Type, &metrics, &keys, &ids, &PyList_Type,
                          &names, &PyList_Type, &texts))
        return NULL;
    Out o = {NULL, 0, 0};
    Metric *table = NULL;
    PyObject *chunks = PyList_New(0);
    if (chunks == NULL) goto done;
    Py_ssize_t nmetrics = PyList_GET_SIZE(metrics), nkeys = keys.len / 8;
    if (pos.itemsize != sizeof(Py_ssize_t) || keys.len % 8 || (!text && ids.len != keys.len)
        || PyList_GET_SIZE(names) != nkeys || PyList_GET_SIZE(texts) != nkeys) {
        PyErr_SetString(PyExc_ValueError, "columns of mismatched sizes");
        goto done;
    }
    if (lo < 0 || hi < lo || base < 0 || pos.len / (Py_ssize_t)sizeof(Py_ssize_t) < hi
        || base + VALUE_SIZE * hi > data.len) {
        PyErr_SetString(PyExc_ValueError, "rows outside the values section");
        goto done;
    }
    table = PyMem_Calloc((size_t)(nmetrics ? nmetrics : 1), sizeof(Metric));
    if (table == NULL) { PyErr_NoMemory(); goto done; }
    Rows r = {data.buf, data.len, keys.buf, nkeys, ids.buf, names, texts, sentinel};
    const Py_ssize_t *at = pos.buf;
    Py_ssize_t last = -1;           /* the instance entry of the row before */
    for (Py_ssize_t n = lo; n < hi; n++) {
        Py_ssize_t off = base + VALUE_SIZE * n, p = at[n], inst = -1;
        if (p < 0 || p >= nmetrics) {
            PyErr_SetString(PyExc_ValueError, "a row names no metric");
            goto done;
        }
        const Metric *m = metric_at(table, metrics, p);
        if (m == NULL) goto done;
        if (token(m->type) == NULL) {
            PyErr_Format(PyExc_ValueError, "row %zd: type %d is not an MMV type", n, m->type);
            goto done;
        }
        const unsigned char *row = r.data + off;
        if (!m->singular) {
            /* libpcp_mmv lays a metric's values out in its instances' order: the entry
               after the last one found, before a search */
            uint64_t key = u64_at(row + 24);
            inst = last + 1 < nkeys && r.keys[last + 1] == key ? last + 1 : find(r.keys, nkeys, key);
            if (inst >= 0) last = inst;
            if (inst < 0 && !text) {
                PyErr_SetString(PyExc_ValueError, "a row names no instance");
                goto done;
            }
        }
        if (line_break(&o, chunks) < 0) goto done;
        if (text ? text_row(&o, off, m) < 0 || text_tail(&o, &r, row, m, inst) < 0
                 : json_row(&o, &r, n, off, m, inst) < 0)
            goto done;
    }
    result = last_chunk(&o, chunks);
done:
    Py_XDECREF(chunks);
    PyMem_Free(o.at);
    PyMem_Free(table);
    PyBuffer_Release(&data);
    PyBuffer_Release(&pos);
    PyBuffer_Release(&keys);
    PyBuffer_Release(&ids);
    return result;
}

/* string_lines(text, data, base, lo, hi): the lines of the string slots lo..hi of the
 * strings section at base (the fast path "dump.mmv-strings"; its reference is
 * mmv_kernel.reference_string_lines): each slot's text up to its NUL, escaped, as JSON
 * Lines or as the listing. A slot without a NUL is not the caller's to give: ValueError. */
static PyObject *string_lines(PyObject *Py_UNUSED(self), PyObject *args) {
    int text;
    Py_buffer data;
    Py_ssize_t base, lo, hi;
    PyObject *result = NULL;
    if (!PyArg_ParseTuple(args, "py*nnn", &text, &data, &base, &lo, &hi)) return NULL;
    Out o = {NULL, 0, 0};
    PyObject *chunks = PyList_New(0);
    if (chunks == NULL) goto done;
    if (lo < 0 || hi < lo || base < 0 || hi > (data.len - base) / STRING_SIZE) {
        PyErr_SetString(PyExc_ValueError, "slots outside the strings section");
        goto done;
    }
    for (Py_ssize_t n = lo; n < hi; n++) {
        Py_ssize_t off = base + STRING_SIZE * n;
        const unsigned char *slot = (const unsigned char *)data.buf + off;
        const unsigned char *nul = memchr(slot, 0, STRING_SIZE);
        if (nul == NULL) {
            PyErr_Format(PyExc_ValueError, "slot %zd has no NUL", n);
            goto done;
        }
        if (line_break(&o, chunks) < 0) goto done;
        if (text) {
            if (PUTS(&o, "  [") < 0 || put_uint(&o, (unsigned long long)n + 1) < 0 || PUTS(&o, "/") < 0
                || put_uint(&o, (unsigned long long)off) < 0 || PUTS(&o, "] ") < 0
                || put_escaped(&o, slot, nul - slot, 0) < 0)
                goto done;
        } else if (PUTS(&o, "{\"kind\":\"string\",\"index\":") < 0 || put_uint(&o, (unsigned long long)n) < 0
                   || PUTS(&o, ",\"offset\":") < 0 || put_uint(&o, (unsigned long long)off) < 0
                   || PUTS(&o, ",\"text\":\"") < 0 || put_escaped(&o, slot, nul - slot, 1) < 0
                   || PUTS(&o, "\"}") < 0) {
            goto done;
        }
    }
    result = last_chunk(&o, chunks);
done:
    Py_XDECREF(chunks);
    PyMem_Free(o.at);
    PyBuffer_Release(&data);
    return result;
}

/* where the string slot at ``at`` has its NUL, from the slot's start; -1 where it has none,
 * -2 where it is no slot in the data (before the 40-byte header's end, or running past the
 * end) */
static long long slot_end_at(const Py_buffer *data, long long at) {
    if (at < 40 || at > (long long)data->len - STRING_SIZE) return -2;
    const unsigned char *slot = (const unsigned char *)data->buf + at;
    const unsigned char *nul = memchr(slot, 0, STRING_SIZE);
    return nul == NULL ? -1 : nul - slot;
}

/* the (data, offsets) of slot_ends and slot_texts, offsets a buffer of int64; -1 (nothing
 * held) where they are not */
static int slot_args(PyObject *args, Py_buffer *data, Py_buffer *offsets) {
    if (!PyArg_ParseTuple(args, "y*y*", data, offsets)) return -1;
    if (offsets->len % 8 == 0) return 0;
    PyErr_SetString(PyExc_ValueError, "offsets are not a buffer of int64");
    PyBuffer_Release(data);
    PyBuffer_Release(offsets);
    return -1;
}

/* slot_ends(data, offsets): for each offset (a buffer of int64), slot_end_at: the fast side
 * of "dump.mmv-slot-ends". Returns the int64 column as bytes. */
static PyObject *slot_ends(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer data, offsets;
    if (slot_args(args, &data, &offsets) < 0) return NULL;
    PyObject *result = PyBytes_FromStringAndSize(NULL, offsets.len);
    if (result == NULL) goto done;
    int64_t *ends = (int64_t *)PyBytes_AS_STRING(result);
    for (Py_ssize_t k = 0; k < offsets.len / 8; k++)
        ends[k] = slot_end_at(&data, i64_at((const unsigned char *)offsets.buf + 8 * k));
done:
    PyBuffer_Release(&data);
    PyBuffer_Release(&offsets);
    return result;
}

/* slot_texts(data, offsets): for each offset (a buffer of int64), the text the PMDA serves
 * from the string slot there: the bytes before its NUL, the first 255 where it has none,
 * None where it is no slot in the data (the fast side of "dump.mmv-slot-texts"). */
static PyObject *slot_texts(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer data, offsets;
    if (slot_args(args, &data, &offsets) < 0) return NULL;
    PyObject *result = NULL;
    PyObject *out = PyList_New(offsets.len / 8);
    if (out == NULL) goto done;
    for (Py_ssize_t k = 0; k < offsets.len / 8; k++) {
        long long at = i64_at((const unsigned char *)offsets.buf + 8 * k);
        long long end = slot_end_at(&data, at);
        PyObject *text = end == -2 ? Py_NewRef(Py_None)
            : PyBytes_FromStringAndSize((const char *)data.buf + at, end == -1 ? STRING_SIZE - 1 : end);
        if (text == NULL) { Py_DECREF(out); goto done; }
        PyList_SET_ITEM(out, k, text);
    }
    result = out;
done:
    PyBuffer_Release(&data);
    PyBuffer_Release(&offsets);
    return result;
}

static const unsigned char ZEROS[STRING_SIZE];

/* clean_slots(data, base, count): per slot of the strings section at base, 1 where it has a
 * NUL and only zeros after it, else 0 (the fast side of "dump.mmv-string-clean"). */
static PyObject *clean_slots(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_buffer data;
    Py_ssize_t base, count;
    if (!PyArg_ParseTuple(args, "y*nn", &data, &base, &count)) return NULL;
    PyObject *result = NULL;
    if (base < 0 || count < 0 || base > data.len || count > (data.len - base) / STRING_SIZE) {
        PyErr_SetString(PyExc_ValueError, "slots outside the data");
        goto done;
    }
    result = PyBytes_FromStringAndSize(NULL, count);
    if (result == NULL) goto done;
    char *clean = PyBytes_AS_STRING(result);
    for (Py_ssize_t k = 0; k < count; k++) {
        const unsigned char *slot = (const unsigned char *)data.buf + base + STRING_SIZE * k;
        const unsigned char *nul = memchr(slot, 0, STRING_SIZE);
        clean[k] = nul != NULL && memcmp(nul, ZEROS, (size_t)(slot + STRING_SIZE - nul)) == 0;
    }
done:
    PyBuffer_Release(&data);
    return result;
}

/* interleave(rows, pieces): the fast side of "dump.mmv-interleave" (its reference is
 * mmv_blocks.reference_interleave): rows lines, each made of the pieces in order: a str,
 * the same on every line; a list of str, one per line; ("i", buffer of int64) or ("u",
 * buffer of uint64), one integer per line in decimal; ("j", list of str or None), one text
 * per line as a JSON string (None: null), the texts printable ASCII (escaped already), of
 * which '"' and '\\' are escaped. The last piece is a str ending with a newline, which the
 * last line does not get. Every text is ASCII. Returns the lines in chunks, each of lines
 * joined by newlines, without a final one; None where a column's text is not ASCII or a
 * JSON text not printable (the caller declines it). A piece of another form or length:
 * TypeError or ValueError. */
enum { P_CONST, P_LIST, P_INT, P_UINT, P_JSON };
typedef struct { int kind; PyObject *obj; Py_buffer buf; int held; } Piece;

/* -2: not printable ASCII (no error set) */
static int put_json_text(Out *o, PyObject *s) {
    if (s == Py_None) return PUTS(o, "null");
    if (!PyUnicode_Check(s)) {
        PyErr_SetString(PyExc_TypeError, "a JSON text is a str or None");
        return -1;
    }
    if (!PyUnicode_IS_ASCII(s)) return -2;
    Py_ssize_t n = PyUnicode_GET_LENGTH(s);
    const unsigned char *b = PyUnicode_1BYTE_DATA(s);
    if (grow(o, 2 * n + 2) < 0) return -1;
    char *w = o->at + o->len;
    *w++ = '"';
    for (Py_ssize_t k = 0; k < n; k++) {
        unsigned char c = b[k];
        if (c < 0x20 || c > 0x7E) return -2;
        if (c == '"' || c == '\\') *w++ = '\\';
        *w++ = (char)c;
    }
    *w++ = '"';
    o->len = w - o->at;
    return 0;
}

static PyObject *interleave(PyObject *Py_UNUSED(self), PyObject *args) {
    Py_ssize_t rows;
    PyObject *pieces, *result = NULL, *chunks = NULL;
    if (!PyArg_ParseTuple(args, "nO!", &rows, &PyTuple_Type, &pieces)) return NULL;
    Py_ssize_t np = PyTuple_GET_SIZE(pieces);
    Out o = {NULL, 0, 0};
    Piece *p = PyMem_Calloc((size_t)(np ? np : 1), sizeof(Piece));
    if (p == NULL) return PyErr_NoMemory();
    if (rows < 0 || np == 0) {
        PyErr_SetString(PyExc_ValueError, "no pieces, or a negative count of rows");
        goto done;
    }
    for (Py_ssize_t k = 0; k < np; k++) {
        PyObject *piece = PyTuple_GET_ITEM(pieces, k);
        p[k].obj = piece;
        if (PyUnicode_Check(piece)) {
            p[k].kind = P_CONST;
            if (!PyUnicode_IS_ASCII(piece)) {
                result = Py_NewRef(Py_None);
                goto done;
            }
        } else if (PyList_Check(piece)) {
            p[k].kind = P_LIST;
            if (PyList_GET_SIZE(piece) != rows) {
                PyErr_SetString(PyExc_ValueError, "a column of another length");
                goto done;
            }
        } else if (PyTuple_Check(piece) && PyTuple_GET_SIZE(piece) == 2
                   && PyUnicode_Check(PyTuple_GET_ITEM(piece, 0))) {
            const char *kind = PyUnicode_AsUTF8(PyTuple_GET_ITEM(piece, 0));
            PyObject *column = PyTuple_GET_ITEM(piece, 1);
            if (kind == NULL) goto done;
            if (strcmp(kind, "j") == 0) {
                p[k].kind = P_JSON;
                p[k].obj = column;
                if (!PyList_Check(column) || PyList_GET_SIZE(column) != rows) {
                    PyErr_SetString(PyExc_ValueError, "a JSON column that is not a list of the rows' length");
                    goto done;
                }
            } else if (strcmp(kind, "i") == 0 || strcmp(kind, "u") == 0) {
                p[k].kind = kind[0] == 'i' ? P_INT : P_UINT;
                if (PyObject_GetBuffer(column, &p[k].buf, PyBUF_SIMPLE) < 0) goto done;
                p[k].held = 1;
                if (p[k].buf.len % 8 || p[k].buf.len / 8 != rows) {   /* no 8 * rows: it may overflow */
                    PyErr_SetString(PyExc_ValueError, "an integer column of another length");
                    goto done;
                }
            } else {
                PyErr_SetString(PyExc_ValueError, "a column kind that is not i, u or j");
                goto done;
            }
        } else {
            PyErr_SetString(PyExc_TypeError, "a piece is a str, a list of str or a (kind, column) pair");
            goto done;
        }
    }
    Py_ssize_t last_len;
    if (p[np - 1].kind != P_CONST || PyUnicode_AsUTF8AndSize(p[np - 1].obj, &last_len) == NULL
        || last_len == 0 || PyUnicode_AsUTF8(p[np - 1].obj)[last_len - 1] != '\n') {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "the last piece does not end a line");
        goto done;
    }
    chunks = PyList_New(0);
    if (chunks == NULL) goto done;
    int started = 0;                /* a line in the buffer (lines may be empty) */
    for (Py_ssize_t n = 0; n < rows; n++) {
        if (o.len >= CHUNK) {
            if (flush(&o, chunks) < 0) goto done;
            started = 0;
        }
        if (started && PUTS(&o, "\n") < 0) goto done;
        started = 1;
        for (Py_ssize_t k = 0; k < np; k++) {
            int rc;
            switch (p[k].kind) {
            case P_CONST: {
                Py_ssize_t len;
                const char *u = PyUnicode_AsUTF8AndSize(p[k].obj, &len);
                rc = put(&o, u, k == np - 1 ? len - 1 : len);
                break;
            }
            case P_LIST: {
                PyObject *item = PyList_GET_ITEM(p[k].obj, n);
                if (!PyUnicode_Check(item)) {
                    PyErr_SetString(PyExc_TypeError, "a column's item is not a str");
                    goto done;
                }
                rc = PyUnicode_IS_ASCII(item) ? put_str(&o, item) : -2;
                break;
            }
            case P_INT: rc = put_int(&o, i64_at((const unsigned char *)p[k].buf.buf + 8 * n)); break;
            case P_UINT: rc = put_uint(&o, u64_at((const unsigned char *)p[k].buf.buf + 8 * n)); break;
            default: rc = put_json_text(&o, PyList_GET_ITEM(p[k].obj, n));
            }
            if (rc == -2) {
                result = Py_NewRef(Py_None);
                goto done;
            }
            if (rc < 0) goto done;
        }
    }
    if (started && flush(&o, chunks) < 0) goto done;
    result = Py_NewRef(chunks);
done:
    Py_XDECREF(chunks);
    for (Py_ssize_t k = 0; k < np; k++)
        if (p[k].held) PyBuffer_Release(&p[k].buf);
    PyMem_Free(p);
    PyMem_Free(o.at);
    return result;
}

static PyMethodDef methods[] = {
    {"slot_ends", slot_ends, METH_VARARGS, "Where each string slot has its NUL (-1 none, -2 no slot)."},
    {"clean_slots", clean_slots, METH_VARARGS, "Which slots of a strings section are clean."},
    {"slot_texts", slot_texts, METH_VARARGS, "The text the PMDA serves from each string slot (None: no slot)."},
    {"value_lines", value_lines, METH_VARARGS, "The lines of clean MMV value rows lo..hi, in chunks."},
    {"string_lines", string_lines, METH_VARARGS, "The lines of MMV string slots lo..hi, in chunks."},
    {"interleave", interleave, METH_VARARGS, "Lines made of constant pieces and columns, in chunks."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_mmvrows",
                                    "The compiled kernels of the MMV dump's value rows and string slots.", -1, methods};

PyMODINIT_FUNC PyInit__mmvrows(void) {
    for (int k = 0; k < 256; k++) {
        HEX_PAIRS[2 * k] = HEX[k >> 4];
        HEX_PAIRS[2 * k + 1] = HEX[k & 15];
    }
    return PyModule_Create(&module);
}
