/* One metric's MMV values made into Value tuples, straight from the file's bytes.
 *
 * The compiled side of the registered fast path "mmv.value-run"
 * (pcpconform/mmv/columns.py, whose ValueRun._make_columns is the reference): a file at
 * the PMDA's limits holds 10^5 values, and making each Value in Python (its atom's bytes,
 * its integers, a zip tuple and the named tuple) costs more than mmvdump's whole run. The
 * reader has checked every row (a known metric, an instance of its indom, a terminated
 * string slot); this module reads only inside the buffers it is given and returns None
 * for a row that leaves them, which the caller declines.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

static inline long long i64_at(const unsigned char *p) {
    int64_t v;
    memcpy(&v, p, 8);           /* the file's words are little-endian, as is this machine's */
    return (long long)v;
}

/* value_run(Value, data, base, size, lo, hi, rows, internals, string_at, string_end,
 *           singular, string):
 * the Values of rows lo..hi of the values section at base (entries of size bytes: the
 * atom's 8 bytes, then the extra as int64), or of the rows listed in ``rows`` (a buffer of
 * int64; empty: lo..hi). A row's instance is internals[row] (None when singular); a STRING
 * row's text is data[string_at[row]:string_end[row]] decoded as UTF-8 with surrogateescape,
 * and its extra 0. Returns a tuple of Value, or None where a row or a slot is outside the
 * buffers. */
static PyObject *value_run(PyObject *Py_UNUSED(self), PyObject *args) {
    PyTypeObject *vtype;
    Py_buffer data, rows, internals, string_at, string_end;
    Py_ssize_t base, size, lo, hi;
    int singular, string;
    if (!PyArg_ParseTuple(args, "O!y*nnnny*y*y*y*pp", &PyType_Type, &vtype, &data, &base, &size, &lo,
                          &hi, &rows, &internals, &string_at, &string_end, &singular, &string))
        return NULL;
    PyObject *result = NULL;
    int listed = rows.len > 0;
    Py_ssize_t n = listed ? rows.len / 8 : hi - lo;
    Py_ssize_t known = internals.len / 8;
    Py_ssize_t slots = string_at.len / 8 < string_end.len / 8 ? string_at.len / 8 : string_end.len / 8;
    if (!PyType_IsSubtype(vtype, &PyTuple_Type) || n < 0 || size < 16 || base < 0 || lo < 0 || rows.len % 8) {
        PyErr_SetString(PyExc_ValueError, "not a tuple type, or rows that are not int64");
        goto done;
    }
    const unsigned char *b = data.buf;
    const unsigned char *listing = rows.buf;
    /* the last row whose 16 bytes lie inside the data (compared, never multiplied: no
       overflow whatever the arguments) */
    long long last = data.len < 16 || base > data.len - 16 ? -1 : (long long)((data.len - 16 - base) / size);
    /* every row inside the buffers, before anything is made */
    for (Py_ssize_t k = 0; k < n; k++) {
        long long r = listed ? i64_at(listing + 8 * k) : (long long)lo + k;
        if (r < 0 || r > last || (!singular && r >= known) || (string && r >= slots)) {
            result = Py_NewRef(Py_None);
            goto done;
        }
        if (string) {
            long long at = i64_at((const unsigned char *)string_at.buf + 8 * r);
            long long end = i64_at((const unsigned char *)string_end.buf + 8 * r);
            if (at < 0 || end < at || end > data.len) {
                result = Py_NewRef(Py_None);
                goto done;
            }
        }
    }
    PyObject *out = PyTuple_New(n);
    if (out == NULL) goto done;
    for (Py_ssize_t k = 0; k < n; k++) {
        long long r = listed ? i64_at(listing + 8 * k) : lo + k;
        const unsigned char *entry = b + base + r * size;
        PyObject *value = vtype->tp_alloc(vtype, 4);
        if (value == NULL) { Py_DECREF(out); goto done; }
#if PY_VERSION_HEX >= 0x030E0000
        ((PyTupleObject *)value)->ob_hash = -1;   /* no hash cached yet (as tuple.__new__ says) */
#endif
        PyTuple_SET_ITEM(out, k, value);
        /* each member set as it is made, so that the tuple owns (and frees) what was made */
        PyObject *item = singular ? Py_NewRef(Py_None)
            : PyLong_FromLongLong(i64_at((const unsigned char *)internals.buf + 8 * r));
        if (item == NULL) { Py_DECREF(out); goto done; }
        PyTuple_SET_ITEM(value, 0, item);
        item = PyBytes_FromStringAndSize((const char *)entry, 8);
        if (item == NULL) { Py_DECREF(out); goto done; }
        PyTuple_SET_ITEM(value, 1, item);
        long long at = 0, end = 0;
        if (string) {
            at = i64_at((const unsigned char *)string_at.buf + 8 * r);
            end = i64_at((const unsigned char *)string_end.buf + 8 * r);
        }
        item = string ? PyLong_FromLong(0) : PyLong_FromLongLong(i64_at(entry + 8));
        if (item == NULL) { Py_DECREF(out); goto done; }
        PyTuple_SET_ITEM(value, 2, item);
        item = string ? PyUnicode_DecodeUTF8((const char *)b + at, end - at, "surrogateescape")
                      : Py_NewRef(Py_None);
        if (item == NULL) { Py_DECREF(out); goto done; }
        PyTuple_SET_ITEM(value, 3, item);
    }
    result = out;
done:
    PyBuffer_Release(&data);
    PyBuffer_Release(&rows);
    PyBuffer_Release(&internals);
    PyBuffer_Release(&string_at);
    PyBuffer_Release(&string_end);
    return result;
}

static PyMethodDef methods[] = {
    {"value_run", value_run, METH_VARARGS, "The Values of one metric's rows of an MMV values section."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_mmvcols",
                                    "The compiled kernel of the MMV reader's values.", -1, methods};

PyMODINIT_FUNC PyInit__mmvcols(void) { return PyModule_Create(&module); }
