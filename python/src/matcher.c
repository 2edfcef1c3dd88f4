/*
 * gramask._core.GrammarMatcher and BatchGrammarMatcher: the per-sequence
 * matcher and the thread-pool batch fill. These are the per-step calls of a
 * decoding loop, so they parse their arguments by hand (METH_FASTCALL) and
 * are the public classes themselves, with no Python layer in between.
 */
#include "core.h" /* Python.h first, as Python requires */

#include <string.h>

/* ---------------------------------------------------------------- matcher */

gm_matcher *gmpy_matcher_handle(gmpy_matcher *self)
{
    if (!self->m) {
        PyErr_SetString(PyExc_ValueError, "this GrammarMatcher was closed (or never initialized)");
        return NULL;
    }
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "this GrammarMatcher is in use by another thread; a "
                        "matcher serves one sequence from one thread at a time (fork() it)");
        return NULL;
    }
    return self->m;
}

static PyObject *matcher_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    gmpy_matcher *self = (gmpy_matcher *)type->tp_alloc(type, 0);
    return (PyObject *)self;
}

static int matcher_init(gmpy_matcher *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"compiled_grammar", "max_rollback_tokens",
                             "terminate_without_stop_token", "eos_after_end", NULL};
    PyObject *owner;
    long max_rollback = 0;
    int no_stop = 0, eos_after_end = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|$lpp:GrammarMatcher", kwlist, &owner,
                                     &max_rollback, &no_stop, &eos_after_end))
        return -1;
    if (self->m) {
        PyErr_SetString(PyExc_RuntimeError, "GrammarMatcher.__init__ called twice");
        return -1;
    }
    if (max_rollback < 0 || max_rollback > (long)UINT32_MAX) {
        PyErr_Format(PyExc_ValueError, "max_rollback_tokens must be >= 0 (0 = unlimited), not %ld",
                     max_rollback);
        return -1;
    }
    gmpy_compiled *c = gmpy_compiled_of(owner);
    if (!c)
        return -1;
    if (!c->c) {
        Py_DECREF(c);
        PyErr_SetString(PyExc_ValueError, "this compiled grammar was closed");
        return -1;
    }
    gm_matcher_options o = {.max_rollback = (uint32_t)max_rollback,
                            .terminate_without_stop_token = no_stop != 0,
                            .eos_after_end = eos_after_end != 0};
    gm_error err;
    if (gm_matcher_create(c->c, &o, &self->m, &err) != GM_OK) {
        Py_DECREF(c);
        gmpy_raise(&err);
        return -1;
    }
    self->c = c->c;
    self->words = gm_compiled_mask_words(c->c);
    self->max_rollback = (uint32_t)max_rollback;
    Py_DECREF(c);
    Py_INCREF(owner);
    self->owner = owner;
    return 0;
}

static void matcher_dealloc(gmpy_matcher *self)
{
    gm_matcher_destroy(self->m);
    PyMem_RawFree(self->scratch);
    Py_XDECREF(self->owner);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Parses (bitmask, index=0) of a fast call. */
static int fill_args(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, PyObject **bitmask,
                     Py_ssize_t *index)
{
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    *index = 0;
    if (nargs < 1 || nargs + nkw > 2) {
        PyErr_SetString(PyExc_TypeError, "fill_next_token_bitmask(bitmask, index=0)");
        return -1;
    }
    *bitmask = args[0];
    PyObject *ix = NULL;
    if (nargs == 2)
        ix = args[1];
    else if (nkw == 1) {
        if (!PyUnicode_Check(PyTuple_GET_ITEM(kwnames, 0)) ||
            PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), "index") != 0) {
            PyErr_Format(PyExc_TypeError, "fill_next_token_bitmask() got an unexpected keyword "
                         "argument %R", PyTuple_GET_ITEM(kwnames, 0));
            return -1;
        }
        ix = args[1];
    }
    if (ix) {
        *index = PyNumber_AsSsize_t(ix, PyExc_IndexError);
        if (*index == -1 && PyErr_Occurred())
            return -1;
    }
    return 0;
}

static PyObject *matcher_fill(gmpy_matcher *self, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames)
{
    PyObject *bitmask;
    Py_ssize_t index;
    gm_matcher *m = gmpy_matcher_handle(self);
    if (!m || fill_args(args, nargs, kwnames, &bitmask, &index) < 0)
        return NULL;
    gmpy_array a;
    if (gmpy_array_get(bitmask, "bitmask", &a) < 0)
        return NULL;
    uint32_t *row = gmpy_bitmask_row(&a, index, self->words);
    if (!row) {
        gmpy_array_release(&a);
        return NULL;
    }
    gm_error err;
    gm_status st;
    if (a.hold_gil) {
        /* A torch CPU tensor read without DLPack (the bitmask vLLM fills from a thread
           pool): only the GIL keeps its memory valid, so the row is filled into the
           matcher's scratch row without the GIL, then the tensor is taken again, with the
           GIL, and the row copied in. The fill, not the copy, is what takes time. */
        gmpy_array_release(&a);
        if (!self->scratch && !(self->scratch = PyMem_RawMalloc(self->words * sizeof(uint32_t))))
            return PyErr_NoMemory();
        self->busy = 1;
        Py_BEGIN_ALLOW_THREADS
        st = gm_matcher_fill_mask(m, self->scratch, self->words, &err);
        Py_END_ALLOW_THREADS
        self->busy = 0;
        /* The row is copied even on an error: the fill writes an all-zero row then. */
        if (gmpy_array_get(bitmask, "bitmask", &a) < 0)
            return NULL;
        if (!(row = gmpy_bitmask_row(&a, index, self->words))) {
            gmpy_array_release(&a);
            return NULL;
        }
        memcpy(row, self->scratch, self->words * sizeof(uint32_t));
    } else {
        self->busy = 1;
        PyThreadState *ts = gmpy_begin(&a);
        st = gm_matcher_fill_mask(m, row, self->words, &err);
        gmpy_end(ts);
        self->busy = 0;
    }
    /* need_apply, as XGrammar's: false only when every token is allowed. */
    size_t w = 0;
    while (w < self->words && row[w] == UINT32_MAX)
        w++;
    gmpy_array_release(&a);
    if (st != GM_OK)
        return gmpy_raise(&err);
    return PyBool_FromLong(w < self->words);
}

static int token_arg(PyObject *obj, uint32_t *out)
{
    unsigned long x = PyLong_AsUnsignedLong(obj);
    if (x == (unsigned long)-1 && PyErr_Occurred()) {
        if (PyErr_ExceptionMatches(PyExc_TypeError) || PyErr_ExceptionMatches(PyExc_OverflowError)) {
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError, "a token id must be an int in 0..2^32-1, not %R", obj);
        }
        return -1;
    }
    if (x > UINT32_MAX) {
        PyErr_Format(PyExc_ValueError, "token id %lu is out of range", x);
        return -1;
    }
    *out = (uint32_t)x;
    return 0;
}

static PyObject *matcher_accept_token(gmpy_matcher *self, PyObject *arg)
{
    gm_matcher *m = gmpy_matcher_handle(self);
    uint32_t token;
    if (!m)
        return NULL;
    if (!PyLong_CheckExact(arg) && !PyIndex_Check(arg)) {
        PyErr_Format(PyExc_TypeError, "accept_token() takes a token id (int), not %.80s",
                     Py_TYPE(arg)->tp_name);
        return NULL;
    }
    if (!PyLong_CheckExact(arg)) {
        PyObject *i = PyNumber_Index(arg); /* numpy and torch integer scalars */
        if (!i)
            return NULL;
        int r = token_arg(i, &token);
        Py_DECREF(i);
        if (r < 0)
            return NULL;
    } else if (token_arg(arg, &token) < 0) {
        return NULL;
    }
    gm_error err;
    gm_status st = gm_matcher_accept_token(m, token, &err);
    if (st == GM_OK)
        Py_RETURN_TRUE;
    /* After EOS no token is allowed: False, as XGrammar (a failed matcher still raises). */
    if (st == GM_ERR_REJECTED || (st == GM_ERR_STATE && gm_matcher_is_terminated(m)))
        Py_RETURN_FALSE;
    return gmpy_raise(&err);
}

/* A read-only int64 vector through the buffer protocol (gramask.matcher converts tensors). */
static int int64_vector(PyObject *obj, const char *what, Py_buffer *view)
{
    if (PyObject_GetBuffer(obj, view, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0)
        return -1;
    const char *f = view->format ? view->format : "B";
    if (*f == '<' || *f == '=' || *f == '@')
        f++;
    if (view->ndim != 1 || view->itemsize != 8 || (strcmp(f, "q") && strcmp(f, "l"))) {
        PyBuffer_Release(view);
        gmpy_raise_msg(GM_ERR_ARGUMENT, "%s must be a 1-D int64 array", what);
        return -1;
    }
    return 0;
}

static PyObject *matcher_fill_draft_tree(gmpy_matcher *self, PyObject *args)
{
    PyObject *objs[4];
    double limit = -1.0;
    int end_complete = 0;
    gm_matcher *m = gmpy_matcher_handle(self);
    if (!m || !PyArg_ParseTuple(args, "OOOO|dp:_fill_draft_tree", &objs[0], &objs[1], &objs[2],
                                &objs[3], &limit, &end_complete))
        return NULL;
    static const char *const names[3] = {"retrieve_next_token", "retrieve_next_sibling",
                                         "draft_tokens"};
    Py_buffer v[3];
    int got = 0;
    for (; got < 3; got++)
        if (int64_vector(objs[got], names[got], &v[got]) < 0)
            break;
    gmpy_array a;
    int have_mask = 0;
    PyObject *result = NULL;
    if (got < 3)
        goto out;
    Py_ssize_t n = v[0].shape[0];
    if (v[1].shape[0] != n || v[2].shape[0] != n) {
        gmpy_raise_msg(GM_ERR_ARGUMENT, "retrieve_next_token, retrieve_next_sibling and "
                       "draft_tokens must have the same length (%zd, %zd, %zd)", n,
                       v[1].shape[0], v[2].shape[0]);
        goto out;
    }
    if (gmpy_array_get(objs[3], "token_bitmask", &a) < 0)
        goto out;
    have_mask = 1;
    if (a.ndim != 2 || a.shape[0] != n) {
        gmpy_raise_msg(GM_ERR_ARGUMENT, "token_bitmask must have one row per node: shape (%zd, "
                       "%zu), not %s(%zd%s)", n, self->words, a.ndim == 2 ? "" : "1-D ",
                       a.shape[0], a.ndim == 2 ? ", ...": "");
        goto out;
    }
    if (!gmpy_bitmask_row(&a, 0, self->words))
        goto out;
    gm_draft_tree_options o = {.time_limit_s = limit > 0 ? limit : 0,
                               .end_when_complete = end_complete != 0};
    bool completed = true;
    gm_error err;
    self->busy = 1;
    PyThreadState *ts = gmpy_begin(&a);
    gm_status st = gm_matcher_fill_draft_tree(m, v[0].buf, v[1].buf, v[2].buf, (size_t)n,
                                              (uint32_t *)a.data, self->words, &o, &completed,
                                              &err);
    gmpy_end(ts);
    self->busy = 0;
    result = st == GM_OK ? PyBool_FromLong(completed) : gmpy_raise(&err);
out:
    if (have_mask)
        gmpy_array_release(&a);
    for (int i = 0; i < got; i++)
        PyBuffer_Release(&v[i]);
    return result;
}

static PyObject *matcher_accept_string(gmpy_matcher *self, PyObject *arg)
{
    gm_matcher *m = gmpy_matcher_handle(self);
    if (!m)
        return NULL;
    const char *bytes;
    Py_ssize_t len;
    if (PyUnicode_Check(arg)) {
        bytes = PyUnicode_AsUTF8AndSize(arg, &len);
        if (!bytes)
            return NULL;
    } else if (PyBytes_Check(arg)) {
        bytes = PyBytes_AS_STRING(arg);
        len = PyBytes_GET_SIZE(arg);
    } else {
        PyErr_Format(PyExc_TypeError, "accept_string() takes str or bytes, not %.80s",
                     Py_TYPE(arg)->tp_name);
        return NULL;
    }
    gm_error err;
    gm_status st = gm_matcher_accept_bytes(m, (const uint8_t *)bytes, (size_t)len, &err);
    if (st == GM_OK)
        Py_RETURN_TRUE;
    if (st == GM_ERR_REJECTED || (st == GM_ERR_STATE && gm_matcher_is_terminated(m)))
        Py_RETURN_FALSE;
    return gmpy_raise(&err);
}

static PyObject *matcher_validate_tokens(gmpy_matcher *self, PyObject *arg)
{
    gm_matcher *m = gmpy_matcher_handle(self);
    if (!m)
        return NULL;
    PyObject *seq = PySequence_Fast(arg, "validate_tokens() takes a sequence of token ids");
    if (!seq)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    uint32_t *ids = PyMem_Malloc(sizeof *ids * (size_t)(n ? n : 1));
    if (!ids) {
        Py_DECREF(seq);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *x = PyNumber_Index(PySequence_Fast_GET_ITEM(seq, i));
        int r = x ? token_arg(x, &ids[i]) : -1;
        Py_XDECREF(x);
        if (r < 0) {
            PyMem_Free(ids);
            Py_DECREF(seq);
            return NULL;
        }
    }
    Py_DECREF(seq);
    uint32_t nv = gm_compiled_vocab_size(self->c);
    for (Py_ssize_t i = 0; i < n; i++)
        if (ids[i] >= nv) {
            PyErr_Format(PyExc_ValueError, "validate_tokens: token id %u (at %zd) is out of range: "
                         "the vocabulary has %u ids (ids of another tokenizer?)", ids[i], i, nv);
            PyMem_Free(ids);
            return NULL;
        }
    size_t accepted = 0;
    gm_error err;
    gm_status st = gm_matcher_validate_tokens(m, ids, (size_t)n, &accepted, &err);
    PyMem_Free(ids);
    if (st != GM_OK)
        return gmpy_raise(&err);
    return PyLong_FromSize_t(accepted);
}

static PyObject *matcher_rollback(gmpy_matcher *self, PyObject *const *args, Py_ssize_t nargs,
                                  PyObject *kwnames)
{
    gm_matcher *m = gmpy_matcher_handle(self);
    if (!m)
        return NULL;
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    if (nargs + nkw > 1 || (nkw == 1 && PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0),
                                                                         "num_tokens") != 0)) {
        PyErr_SetString(PyExc_TypeError, "rollback(num_tokens=1)");
        return NULL;
    }
    Py_ssize_t n = 1;
    if (nargs + nkw == 1) {
        n = PyNumber_AsSsize_t(args[0], PyExc_OverflowError);
        if (n == -1 && PyErr_Occurred())
            return NULL;
        if (n < 0) {
            PyErr_Format(PyExc_ValueError, "rollback: num_tokens must be >= 0, not %zd", n);
            return NULL;
        }
    }
    gm_error err;
    if (gm_matcher_rollback(m, (size_t)n, &err) != GM_OK)
        return gmpy_raise(&err);
    Py_RETURN_NONE;
}

static PyObject *matcher_fork(gmpy_matcher *self, PyObject *unused)
{
    gm_matcher *m = gmpy_matcher_handle(self);
    if (!m)
        return NULL;
    gmpy_matcher *copy = (gmpy_matcher *)Py_TYPE(self)->tp_alloc(Py_TYPE(self), 0);
    if (!copy)
        return NULL;
    gm_error err;
    if (gm_matcher_clone(m, &copy->m, &err) != GM_OK) {
        Py_DECREF(copy);
        return gmpy_raise(&err);
    }
    copy->c = self->c;
    copy->words = self->words;
    copy->max_rollback = self->max_rollback;
    Py_INCREF(self->owner);
    copy->owner = self->owner;
    return (PyObject *)copy;
}

static PyObject *matcher_deepcopy(gmpy_matcher *self, PyObject *memo)
{
    return matcher_fork(self, NULL);
}

/* The longest prefix of b[0..len) that is whole UTF-8 characters. */
static size_t utf8_whole(const uint8_t *b, size_t len)
{
    size_t i = 0, ok = 0;
    while (i < len) {
        uint8_t c = b[i];
        size_t n = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3 : (c & 0xF8) == 0xF0 ? 4 : 0;
        if (n == 0 || i + n > len)
            break;
        size_t k = 1;
        while (k < n && (b[i + k] & 0xC0) == 0x80)
            k++;
        if (k < n)
            break;
        i += n;
        ok = i;
    }
    return ok;
}

static PyObject *forced_bytes(gmpy_matcher *self, int as_str)
{
    gm_matcher *m = gmpy_matcher_handle(self);
    if (!m)
        return NULL;
    size_t cap = 256, len = 0;
    uint8_t *buf = NULL;
    gm_error err;
    for (;;) {
        uint8_t *nb = PyMem_Realloc(buf, cap);
        if (!nb) {
            PyMem_Free(buf);
            return PyErr_NoMemory();
        }
        buf = nb;
        if (gm_matcher_forced_bytes(m, buf, cap, &len, &err) != GM_OK) {
            PyMem_Free(buf);
            return gmpy_raise(&err);
        }
        if (len < cap || cap >= ((size_t)1 << 26))
            break;
        cap *= 4; /* it may have been cut at cap */
    }
    PyObject *out = as_str ? PyUnicode_DecodeUTF8((const char *)buf, (Py_ssize_t)utf8_whole(buf, len),
                                                  "strict")
                           : PyBytes_FromStringAndSize((const char *)buf, (Py_ssize_t)len);
    PyMem_Free(buf);
    return out;
}

static PyObject *matcher_jump_forward_string(gmpy_matcher *self, PyObject *unused)
{
    return forced_bytes(self, 1);
}

static PyObject *matcher_jump_forward_bytes(gmpy_matcher *self, PyObject *unused)
{
    return forced_bytes(self, 0);
}

static PyObject *matcher_is_terminated(gmpy_matcher *self, PyObject *unused)
{
    gm_matcher *m = gmpy_matcher_handle(self);
    return m ? PyBool_FromLong(gm_matcher_is_terminated(m)) : NULL;
}

/* The matcher's captures as a list of (label, bytes), or of (label, start, bytes) with
   with_start (note [captures] in earley/capture.c). */
static PyObject *captures_list(gmpy_matcher *self, int dedup, bool with_start)
{
    gm_matcher *m = gmpy_matcher_handle(self);
    if (!m)
        return NULL;
    gm_error err = {0};
    const gm_capture *caps;
    size_t n;
    if (gm_matcher_captures(m, dedup != 0, &caps, &n, &err) != GM_OK)
        return gmpy_raise(&err);
    PyObject *list = PyList_New((Py_ssize_t)n);
    if (!list)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        PyObject *t = with_start
            ? Py_BuildValue("(sny#)", caps[i].label, (Py_ssize_t)caps[i].start,
                            (const char *)caps[i].text, (Py_ssize_t)caps[i].len)
            : Py_BuildValue("(sy#)", caps[i].label, (const char *)caps[i].text,
                            (Py_ssize_t)caps[i].len);
        if (!t) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, (Py_ssize_t)i, t);
    }
    return list;
}

/* XGrammar's get_captures(deduplicate=True): [(label, bytes)]. */
static PyObject *matcher_get_captures(gmpy_matcher *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"deduplicate", NULL};
    int dedup = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|p:get_captures", kwlist, &dedup))
        return NULL;
    return captures_list(self, dedup, false);
}

/* get_captures with where each span starts: [(label, start, bytes)], for the suffix and
   stop rules of XGrammar's Lark dialect (python/gramask/lark_sufstop.py). */
static PyObject *matcher_capture_spans(gmpy_matcher *self, PyObject *args)
{
    int dedup = 1;
    if (!PyArg_ParseTuple(args, "p:_capture_spans", &dedup))
        return NULL;
    return captures_list(self, dedup, true);
}

static PyObject *matcher_rule_temperature(gmpy_matcher *self, PyObject *unused)
{
    gm_matcher *m = gmpy_matcher_handle(self);
    if (!m)
        return NULL;
    float hi, lo;
    gm_error err;
    if (gm_matcher_temperature(m, &hi, &lo, &err) != GM_OK)
        return gmpy_raise(&err);
    if (hi < 0)
        Py_RETURN_NONE;
    return Py_BuildValue("(dd)", (double)hi, (double)lo);
}

static PyObject *matcher_is_accepting(gmpy_matcher *self, PyObject *unused)
{
    gm_matcher *m = gmpy_matcher_handle(self);
    return m ? PyBool_FromLong(gm_matcher_is_accepting(m)) : NULL;
}

static PyObject *matcher_reset(gmpy_matcher *self, PyObject *unused)
{
    gm_matcher *m = gmpy_matcher_handle(self);
    if (!m)
        return NULL;
    gm_matcher_reset(m);
    Py_RETURN_NONE;
}

static PyObject *matcher_close(gmpy_matcher *self, PyObject *unused)
{
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "cannot close a GrammarMatcher another thread is using");
        return NULL;
    }
    gm_matcher_destroy(self->m);
    self->m = NULL;
    PyMem_RawFree(self->scratch);
    self->scratch = NULL;
    Py_CLEAR(self->owner);
    Py_RETURN_NONE;
}

static PyObject *matcher_enter(gmpy_matcher *self, PyObject *unused)
{
    if (!gmpy_matcher_handle(self))
        return NULL;
    Py_INCREF(self);
    return (PyObject *)self;
}

static PyObject *matcher_exit(gmpy_matcher *self, PyObject *args)
{
    PyObject *r = matcher_close(self, NULL);
    if (!r)
        return NULL;
    Py_DECREF(r);
    Py_RETURN_FALSE;
}

static PyObject *matcher_get_compiled(gmpy_matcher *self, void *closure)
{
    if (!gmpy_matcher_handle(self))
        return NULL;
    Py_INCREF(self->owner);
    return self->owner;
}

static PyObject *matcher_get_vocab_size(gmpy_matcher *self, void *closure)
{
    if (!gmpy_matcher_handle(self))
        return NULL;
    return PyLong_FromUnsignedLong(gm_compiled_vocab_size(self->c));
}

static PyObject *matcher_get_max_rollback(gmpy_matcher *self, void *closure)
{
    return PyLong_FromUnsignedLong(self->max_rollback);
}

static PyObject *matcher_get_stop_token_ids(gmpy_matcher *self, void *closure)
{
    if (!gmpy_matcher_handle(self))
        return NULL;
    const uint32_t *ids;
    size_t n = gm_vocab_eos_ids(gm_compiled_vocab(self->c), &ids);
    return gmpy_id_list(ids, n);
}

static PyObject *matcher_get_closed(gmpy_matcher *self, void *closure)
{
    return PyBool_FromLong(self->m == NULL);
}

static PyMethodDef matcher_methods[] = {
    {"fill_next_token_bitmask", (PyCFunction)(void (*)(void))matcher_fill,
     METH_FASTCALL | METH_KEYWORDS,
     "fill_next_token_bitmask($self, /, bitmask, index=0)\n--\n\n"
     "Writes the next-token mask into row `index` of `bitmask` (int32, shape (batch, ceil(V/32))\n"
     "or (ceil(V/32),); numpy array or torch CPU tensor): bit t%32 of word t//32 is 1 when\n"
     "token t is allowed. Returns whether the mask needs applying (False only when every token\n"
     "is allowed). Releases the GIL. Raises StateError after EOS was accepted."},
    {"accept_token", (PyCFunction)matcher_accept_token, METH_O,
     "accept_token($self, token_id, /)\n--\n\n"
     "Advances by one token; False (state unchanged) when the grammar does not allow it,\n"
     "and after EOS (as XGrammar). Raises ArgumentError for an id out of the vocabulary,\n"
     "StateError when the matcher failed earlier (reset() clears it)."},
    {"accept_string", (PyCFunction)matcher_accept_string, METH_O,
     "accept_string($self, text, /)\n--\n\n"
     "Advances by raw text (str as UTF-8, or bytes); one step for rollback. False (state\n"
     "unchanged) when the grammar does not allow it."},
    {"validate_tokens", (PyCFunction)matcher_validate_tokens, METH_O,
     "validate_tokens($self, token_ids, /)\n--\n\n"
     "Speculative decoding: how many of token_ids would be accepted in a row. Does not change\n"
     "the state."},
    {"_fill_draft_tree", (PyCFunction)matcher_fill_draft_tree, METH_VARARGS,
     "_fill_draft_tree($self, next_token, next_sibling, draft_tokens, token_bitmask,\n"
     "                 time_limit=-1.0, end_when_complete=False, /)\n--\n\n"
     "gm_matcher_fill_draft_tree: the three int64 vectors through the buffer protocol, one\n"
     "bitmask row per node. Releases the GIL. False when time_limit (> 0) ran out."},
    {"rollback", (PyCFunction)(void (*)(void))matcher_rollback, METH_FASTCALL | METH_KEYWORDS,
     "rollback($self, /, num_tokens=1)\n--\n\nUndoes the last num_tokens accepted steps."},
    {"fork", (PyCFunction)matcher_fork, METH_NOARGS,
     "fork($self, /)\n--\n\nAn independent copy of this matcher's state (O(1))."},
    {"copy", (PyCFunction)matcher_fork, METH_NOARGS, "copy() -> GrammarMatcher: same as fork()."},
    {"__copy__", (PyCFunction)matcher_fork, METH_NOARGS, "Same as fork()."},
    {"__deepcopy__", (PyCFunction)matcher_deepcopy, METH_O, "Same as fork()."},
    {"find_jump_forward_string", (PyCFunction)matcher_jump_forward_string, METH_NOARGS,
     "find_jump_forward_string($self, /)\n--\n\n"
     "The longest text every allowed continuation starts with (cut to whole UTF-8\n"
     "characters). Does not change the state."},
    {"find_jump_forward_bytes", (PyCFunction)matcher_jump_forward_bytes, METH_NOARGS,
     "find_jump_forward_bytes() -> bytes: find_jump_forward_string() as raw bytes, uncut."},
    {"is_terminated", (PyCFunction)matcher_is_terminated, METH_NOARGS,
     "is_terminated() -> bool: whether EOS has been accepted."},
    {"get_captures", (PyCFunction)(void (*)(void))matcher_get_captures,
     METH_VARARGS | METH_KEYWORDS,
     "get_captures(deduplicate=True) -> list[(str, bytes)]: the spans where captured rules "
     "completed in the accepted output."},
    {"_capture_spans", (PyCFunction)matcher_capture_spans, METH_VARARGS,
     "_capture_spans(deduplicate) -> list[(str, int, bytes)]: get_captures with each span's "
     "start."},
    {"rule_temperature", (PyCFunction)matcher_rule_temperature, METH_NOARGS,
     "rule_temperature() -> (float, float) | None: the next token's rule temperature\n"
     "(XGrammar's name[temperature=t]): the largest and smallest where readings of the\n"
     "output disagree; None where no rule with one is open."},
    {"is_accepting", (PyCFunction)matcher_is_accepting, METH_NOARGS,
     "is_accepting() -> bool: whether EOS would be allowed now (the text is complete)."},
    {"reset", (PyCFunction)matcher_reset, METH_NOARGS,
     "reset() -> None: back to the start of a sequence (also clears a failure)."},
    {"close", (PyCFunction)matcher_close, METH_NOARGS,
     "close() -> None: releases the C matcher now (idempotent); later calls raise ValueError."},
    {"__enter__", (PyCFunction)matcher_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)matcher_exit, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef matcher_getset[] = {
    {"compiled_grammar", (getter)matcher_get_compiled, NULL, "The CompiledGrammar it matches.", NULL},
    {"vocab_size", (getter)matcher_get_vocab_size, NULL, "Token ids (mask bits).", NULL},
    {"max_rollback_tokens", (getter)matcher_get_max_rollback, NULL,
     "Steps kept for rollback (0 = unlimited).", NULL},
    {"stop_token_ids", (getter)matcher_get_stop_token_ids, NULL, "The EOS ids.", NULL},
    {"closed", (getter)matcher_get_closed, NULL, "Whether close() was called.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject gmpy_matcher_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "gramask.GrammarMatcher",
    .tp_basicsize = sizeof(gmpy_matcher),
    .tp_dealloc = (destructor)matcher_dealloc,
    /* BASETYPE: gramask.matcher subclasses it with XGrammar's arguments. */
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "GrammarMatcher(compiled_grammar, *, max_rollback_tokens=0)\n--\n\n"
              "The state of one sequence being decoded under a compiled grammar: next-token\n"
              "masks, accept, rollback, fork, jump-forward. Use one matcher from one thread at a\n"
              "time; matchers of one compiled grammar may run on different threads. A context\n"
              "manager; close() or garbage collection releases the C matcher.",
    .tp_methods = matcher_methods,
    .tp_getset = matcher_getset,
    .tp_init = (initproc)matcher_init,
    .tp_new = matcher_new,
};

/* ------------------------------------------------------------------ batch */

typedef struct gmpy_batch {
    PyObject_HEAD
    gm_batch *b;
    unsigned threads;
    int busy;
    gm_matcher **handles;     /* [cap] per call, reused */
    gmpy_matcher **objs;
    uint32_t *scratch;        /* rows for calls with scattered indices */
    size_t cap, scratch_words;
} gmpy_batch;

static int batch_init(gmpy_batch *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"max_threads", "spin_us", NULL};
    int threads = -1, spin = -1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|i$i:BatchGrammarMatcher", kwlist, &threads, &spin))
        return -1;
    if (self->b) {
        PyErr_SetString(PyExc_RuntimeError, "BatchGrammarMatcher.__init__ called twice");
        return -1;
    }
    if (threads == 0 || threads < -1 || threads > 1024) {
        PyErr_Format(PyExc_ValueError, "max_threads must be -1 (one per CPU) or 1..1024, not %d",
                     threads);
        return -1;
    }
    gm_batch_options o = {.threads = threads < 0 ? 0 : (unsigned)threads,
                          .spin_us = spin < 0 ? GM_BATCH_SPIN_US_DEFAULT : (unsigned)spin};
    gm_error err;
    gm_status st;
    Py_BEGIN_ALLOW_THREADS
    st = gm_batch_create(&o, &self->b, &err);
    Py_END_ALLOW_THREADS
    if (st != GM_OK) {
        gmpy_raise(&err);
        return -1;
    }
    self->threads = o.threads;
    return 0;
}

static void batch_free(gmpy_batch *self)
{
    gm_batch *b = self->b;
    self->b = NULL;
    if (b) {
        Py_BEGIN_ALLOW_THREADS /* joins the workers */
        gm_batch_destroy(b);
        Py_END_ALLOW_THREADS
    }
    PyMem_Free(self->handles);
    PyMem_Free(self->objs);
    PyMem_Free(self->scratch);
    self->handles = NULL;
    self->objs = NULL;
    self->scratch = NULL;
    self->cap = self->scratch_words = 0;
}

static void batch_dealloc(gmpy_batch *self)
{
    batch_free(self);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static gm_batch *batch_handle(gmpy_batch *self)
{
    if (!self->b)
        PyErr_SetString(PyExc_ValueError, "this BatchGrammarMatcher was closed");
    else if (self->busy)
        PyErr_SetString(PyExc_RuntimeError, "this BatchGrammarMatcher is in use by another thread");
    else
        return self->b;
    return NULL;
}

/* Reads `matchers` into self->objs / self->handles and marks them busy. -1 on error. */
static int take_matchers(gmpy_batch *self, PyObject *seq, Py_ssize_t n)
{
    if ((size_t)n > self->cap) {
        size_t cap = (size_t)n;
        gm_matcher **h = PyMem_Realloc(self->handles, cap * sizeof *h);
        if (h)
            self->handles = h;
        gmpy_matcher **o = h ? PyMem_Realloc(self->objs, cap * sizeof *o) : NULL;
        if (!o) {
            PyErr_NoMemory();
            return -1;
        }
        self->objs = o;
        self->cap = cap;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *x = PySequence_Fast_GET_ITEM(seq, i);
        gm_matcher *m = NULL;
        if (!PyObject_TypeCheck(x, &gmpy_matcher_type))
            PyErr_Format(PyExc_TypeError, "matchers[%zd] is %.80s, not a GrammarMatcher", i,
                         Py_TYPE(x)->tp_name);
        else if (((gmpy_matcher *)x)->busy)
            PyErr_Format(PyExc_RuntimeError, "matchers[%zd] appears twice in the batch or is in use "
                         "by another thread", i);
        else
            m = gmpy_matcher_handle((gmpy_matcher *)x);
        if (!m) {
            for (Py_ssize_t k = 0; k < i; k++)
                self->objs[k]->busy = 0;
            return -1;
        }
        self->objs[i] = (gmpy_matcher *)x;
        self->objs[i]->busy = 1;
        self->handles[i] = m;
    }
    return 0;
}

static void release_matchers(gmpy_batch *self, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; i < n; i++)
        self->objs[i]->busy = 0;
}

/* Bitmask rows for the matchers: indices, checked, or NULL for 0..n-1. *direct: first row if contiguous. */
static Py_ssize_t *batch_rows(PyObject *indices, Py_ssize_t n, Py_ssize_t rows, Py_ssize_t *direct)
{
    *direct = -1;
    if (indices == Py_None) {
        if (n > rows) {
            PyErr_Format(PyExc_ValueError, "%zd matchers but the bitmask has %zd rows", n, rows);
            return NULL;
        }
        *direct = 0;
        return PyMem_Malloc(1);
    }
    PyObject *seq = PySequence_Fast(indices, "indices must be a sequence of ints");
    if (!seq)
        return NULL;
    if (PySequence_Fast_GET_SIZE(seq) != n) {
        PyErr_Format(PyExc_ValueError, "%zd indices for %zd matchers", PySequence_Fast_GET_SIZE(seq), n);
        Py_DECREF(seq);
        return NULL;
    }
    Py_ssize_t *r = PyMem_Malloc(sizeof *r * (size_t)(n ? n : 1));
    if (!r) {
        Py_DECREF(seq);
        return (Py_ssize_t *)PyErr_NoMemory();
    }
    int contiguous = 1;
    for (Py_ssize_t i = 0; i < n; i++) {
        r[i] = PyNumber_AsSsize_t(PySequence_Fast_GET_ITEM(seq, i), PyExc_IndexError);
        if (r[i] == -1 && PyErr_Occurred())
            goto fail;
        if (r[i] < 0 || r[i] >= rows) {
            PyErr_Format(PyExc_IndexError, "indices[%zd] = %zd is out of range (the bitmask has %zd "
                         "rows)", i, r[i], rows);
            goto fail;
        }
        for (Py_ssize_t k = 0; k < i; k++)
            if (r[k] == r[i]) {
                PyErr_Format(PyExc_ValueError, "indices[%zd] and indices[%zd] are both %zd", k, i, r[i]);
                goto fail;
            }
        contiguous &= i == 0 || r[i] == r[i - 1] + 1;
    }
    Py_DECREF(seq);
    if (contiguous && n)
        *direct = r[0];
    return r;
fail:
    Py_DECREF(seq);
    PyMem_Free(r);
    return NULL;
}

static PyObject *batch_fill(gmpy_batch *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"matchers", "bitmask", "indices", NULL};
    PyObject *matchers, *bitmask, *indices = Py_None;
    gm_batch *b = batch_handle(self);
    if (!b || !PyArg_ParseTupleAndKeywords(args, kw, "OO|O:batch_fill_next_token_bitmask", kwlist,
                                           &matchers, &bitmask, &indices))
        return NULL;
    PyObject *seq = PySequence_Fast(matchers, "matchers must be a sequence of GrammarMatcher");
    if (!seq)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    gmpy_array a;
    if (gmpy_array_get(bitmask, "bitmask", &a) < 0) {
        Py_DECREF(seq);
        return NULL;
    }
    PyObject *result = NULL;
    Py_ssize_t *rows = NULL, direct = -1, taken = 0;
    size_t words = (size_t)a.shape[a.ndim - 1];
    if (!gmpy_bitmask_row(&a, 0, words))
        goto done;
    rows = batch_rows(indices, n, a.ndim == 2 ? a.shape[0] : 1, &direct);
    if (!rows || take_matchers(self, seq, n) < 0)
        goto done;
    taken = n;
    for (Py_ssize_t i = 0; i < n; i++)
        if (self->objs[i]->words != words) {
            PyErr_Format(PyExc_ValueError, "matchers[%zd] has masks of %zu words, the bitmask rows %zu",
                         i, self->objs[i]->words, words);
            goto done;
        }
    uint32_t *out = (uint32_t *)a.data + (direct >= 0 ? (size_t)direct * words : 0);
    if (direct < 0) {
        if (self->scratch_words < (size_t)n * words) {
            uint32_t *s = PyMem_Realloc(self->scratch, (size_t)n * words * sizeof *s);
            if (!s) {
                PyErr_NoMemory();
                goto done;
            }
            self->scratch = s;
            self->scratch_words = (size_t)n * words;
        }
        out = self->scratch;
    }
    gm_error err;
    gm_status st;
    self->busy = 1;
    PyThreadState *ts = gmpy_begin(&a);
    st = gm_batch_fill_masks(b, self->handles, (size_t)n, out, words, &err);
    if (direct < 0)
        for (Py_ssize_t i = 0; i < n; i++)
            memcpy((uint32_t *)a.data + (size_t)rows[i] * words, out + (size_t)i * words,
                   words * sizeof *out);
    gmpy_end(ts);
    self->busy = 0;
    if (st != GM_OK) {
        gmpy_raise(&err);
        goto done;
    }
    result = Py_None;
    Py_INCREF(result);
done:
    release_matchers(self, taken);
    PyMem_Free(rows);
    gmpy_array_release(&a);
    Py_DECREF(seq);
    return result;
}

static PyObject *batch_accept_token(gmpy_batch *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"matchers", "token_ids", NULL};
    PyObject *matchers, *tokens;
    if (!batch_handle(self) || !PyArg_ParseTupleAndKeywords(args, kw, "OO:batch_accept_token", kwlist,
                                                            &matchers, &tokens))
        return NULL;
    PyObject *ms = PySequence_Fast(matchers, "matchers must be a sequence of GrammarMatcher");
    PyObject *ts = ms ? PySequence_Fast(tokens, "token_ids must be a sequence of ints") : NULL;
    PyObject *out = NULL;
    if (!ts)
        goto done;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(ms);
    if (PySequence_Fast_GET_SIZE(ts) != n) {
        PyErr_Format(PyExc_ValueError, "%zd token ids for %zd matchers", PySequence_Fast_GET_SIZE(ts), n);
        goto done;
    }
    out = PyList_New(n);
    for (Py_ssize_t i = 0; out && i < n; i++) {
        PyObject *m = PySequence_Fast_GET_ITEM(ms, i);
        PyObject *r = PyObject_TypeCheck(m, &gmpy_matcher_type)
                          ? matcher_accept_token((gmpy_matcher *)m, PySequence_Fast_GET_ITEM(ts, i))
                          : (PyErr_Format(PyExc_TypeError, "matchers[%zd] is not a GrammarMatcher", i),
                             NULL);
        if (!r)
            Py_CLEAR(out);
        else
            PyList_SET_ITEM(out, i, r);
    }
done:
    Py_XDECREF(ms);
    Py_XDECREF(ts);
    return out;
}

static PyObject *batch_close(gmpy_batch *self, PyObject *unused)
{
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "cannot close a BatchGrammarMatcher another thread is using");
        return NULL;
    }
    batch_free(self);
    Py_RETURN_NONE;
}

static PyObject *batch_enter(gmpy_batch *self, PyObject *unused)
{
    if (!batch_handle(self))
        return NULL;
    Py_INCREF(self);
    return (PyObject *)self;
}

static PyObject *batch_exit(gmpy_batch *self, PyObject *args)
{
    PyObject *r = batch_close(self, NULL);
    if (!r)
        return NULL;
    Py_DECREF(r);
    Py_RETURN_FALSE;
}

static PyObject *batch_get_threads(gmpy_batch *self, void *closure)
{
    return PyLong_FromUnsignedLong(self->threads);
}

static PyMethodDef batch_methods[] = {
    {"batch_fill_next_token_bitmask", (PyCFunction)(void (*)(void))batch_fill,
     METH_VARARGS | METH_KEYWORDS,
     "batch_fill_next_token_bitmask($self, /, matchers, bitmask, indices=None)\n--\n\n"
     "Fills bitmask[indices[i]] (row i when indices is None) for matchers[i], on the thread\n"
     "pool, without the GIL. A terminated matcher gets an all-zero row. Keep each sequence at\n"
     "the same index from step to step (each thread keeps its rows' caches)."},
    {"batch_accept_token", (PyCFunction)(void (*)(void))batch_accept_token,
     METH_VARARGS | METH_KEYWORDS,
     "batch_accept_token(matchers, token_ids) -> list[bool]: accept_token on each."},
    {"close", (PyCFunction)batch_close, METH_NOARGS, "Stops the threads (idempotent)."},
    {"__enter__", (PyCFunction)batch_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)batch_exit, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef batch_getset[] = {
    {"max_threads", (getter)batch_get_threads, NULL, "Threads filling masks (0 = one per CPU).", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject gmpy_batch_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "gramask.BatchGrammarMatcher",
    .tp_basicsize = sizeof(gmpy_batch),
    .tp_dealloc = (destructor)batch_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
    .tp_doc = "BatchGrammarMatcher(max_threads=-1, *, spin_us=100)\n--\n\n"
              "A pool of threads (the caller's included) filling the masks of many matchers at\n"
              "once. max_threads=-1: one per online CPU. A context manager; close() stops the\n"
              "threads.",
    .tp_methods = batch_methods,
    .tp_getset = batch_getset,
    .tp_init = (initproc)batch_init,
    .tp_new = PyType_GenericNew,
};
