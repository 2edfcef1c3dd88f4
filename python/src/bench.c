/*
 * The C side of bench/bench_python.py: a decoding loop (fill the mask,
 * accept the next token) run entirely in C, so the benchmark can subtract
 * the library's own time from the same loop run through the Python API.
 */
#include "core.h" /* Python.h first, as Python requires */

#include <time.h>

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* _bench_steps(matcher, bitmask, ids) -> ns: reset, then fill + accept for each id. */
PyObject *gmpy_bench_steps(PyObject *mod, PyObject *args)
{
    gmpy_matcher *self;
    PyObject *bitmask, *ids_obj;
    if (!PyArg_ParseTuple(args, "O!OO:_bench_steps", &gmpy_matcher_type, &self, &bitmask, &ids_obj))
        return NULL;
    gm_matcher *m = gmpy_matcher_handle(self);
    if (!m)
        return NULL;
    PyObject *seq = PySequence_Fast(ids_obj, "ids must be a sequence");
    if (!seq)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    uint32_t *ids = PyMem_Malloc(sizeof *ids * (size_t)(n ? n : 1));
    for (Py_ssize_t i = 0; ids && i < n; i++)
        ids[i] = (uint32_t)PyLong_AsUnsignedLong(PySequence_Fast_GET_ITEM(seq, i));
    Py_DECREF(seq);
    if (!ids || PyErr_Occurred()) {
        PyMem_Free(ids);
        return ids ? NULL : PyErr_NoMemory();
    }
    gmpy_array a;
    if (gmpy_array_get(bitmask, "bitmask", &a) < 0) {
        PyMem_Free(ids);
        return NULL;
    }
    uint32_t *row = gmpy_bitmask_row(&a, 0, self->words);
    gm_error err;
    gm_status st = GM_OK;
    uint64_t t0 = now_ns();
    gm_matcher_reset(m);
    for (Py_ssize_t i = 0; row && i < n && st == GM_OK; i++) {
        st = gm_matcher_fill_mask(m, row, self->words, &err);
        if (st == GM_OK)
            st = gm_matcher_accept_token(m, ids[i], &err);
    }
    uint64_t ns = now_ns() - t0;
    gmpy_array_release(&a);
    PyMem_Free(ids);
    if (!row)
        return NULL;
    if (st != GM_OK)
        return gmpy_raise(&err);
    return PyLong_FromUnsignedLongLong(ns);
}
