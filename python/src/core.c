/*
 * gramask._core's exceptions and its vocabulary, grammar and
 * compiled-grammar objects (the module itself is module.c, the matcher and
 * the batch matcher.c, arrays arrays.c). The Python package (gramask/) wraps these
 * in the classes users see; see note [python handles] in core.h.
 */
#include "core.h" /* Python.h first, as Python requires */

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* gramask.errors.BY_STATUS: the exception class of each gm_status, by value. */
static PyObject *error_classes;

/* ---------------------------------------------------------------- errors */

int gmpy_errors_load(void)
{
    PyObject *errors = PyImport_ImportModule("gramask.errors");
    if (!errors)
        return -1;
    error_classes = PyObject_GetAttrString(errors, "BY_STATUS");
    Py_DECREF(errors);
    if (!error_classes || !PyTuple_Check(error_classes)) {
        PyErr_SetString(PyExc_ImportError, "gramask.errors.BY_STATUS must be a tuple");
        return -1;
    }
    return 0;
}

static PyObject *raise_with(gm_status code, const char *message, const char *file, unsigned line,
                            unsigned column)
{
    PyObject *cls = NULL;
    if (error_classes && (Py_ssize_t)code < PyTuple_GET_SIZE(error_classes))
        cls = PyTuple_GET_ITEM(error_classes, (Py_ssize_t)code);
    if (!cls || cls == Py_None)
        cls = PyExc_RuntimeError;
    PyObject *exc = PyObject_CallFunction(cls, "sizII", message, (int)code,
                                          file && *file ? file : NULL, line, column);
    if (exc) {
        PyErr_SetObject(cls, exc);
        Py_DECREF(exc);
    }
    return NULL;
}

PyObject *gmpy_raise(const gm_error *err)
{
    const char *msg = err->message[0] ? err->message : gm_status_name(err->code);
    /* "gm_compiled_load: ..." names a C function a Python caller never called: the
       message without it */
    if (!strncmp(msg, "gm_", 3)) {
        size_t k = 3;
        while (msg[k] == '_' || (msg[k] >= 'a' && msg[k] <= 'z') || (msg[k] >= '0' && msg[k] <= '9'))
            k++;
        if (msg[k] == '.' || msg[k] == ':') {
            while (msg[k] && msg[k] != ':' && msg[k] != ' ')
                k++; /* gm_options.field: */
            if (msg[k] == ':' && msg[k + 1] == ' ')
                msg += k + 2;
        }
    }
    return raise_with(err->code == GM_OK ? GM_ERR_STATE : err->code, msg, err->file, err->line,
                      err->column);
}

PyObject *gmpy_raise_msg(gm_status code, const char *fmt, ...)
{
    char buf[GM_ERROR_MESSAGE_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    return raise_with(code, buf, NULL, 0, 0);
}

static PyObject *closed_error(const char *what)
{
    PyErr_Format(PyExc_ValueError, "this %s was closed", what);
    return NULL;
}

PyObject *gmpy_id_list(const uint32_t *ids, size_t n)
{
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; list && i < n; i++) {
        PyObject *x = PyLong_FromUnsignedLong(ids[i]);
        if (!x)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, (Py_ssize_t)i, x);
    }
    return list;
}

/* Path argument: str or os.PathLike, as a bytes object (PyUnicode_FSConverter). */
static int path_arg(PyObject *obj, PyObject **out)
{
    return PyUnicode_FSConverter(obj, out);
}

/* ------------------------------------------------------------ vocabulary */

static PyObject *vocab_wrap(gm_vocab *v)
{
    gmpy_vocab *self = PyObject_New(gmpy_vocab, &gmpy_vocab_type);
    if (!self) {
        gm_vocab_destroy(v);
        return NULL;
    }
    self->v = v;
    return (PyObject *)self;
}

static void vocab_dealloc(gmpy_vocab *self)
{
    gm_vocab_destroy(self->v);
    PyObject_Free(self);
}

static gm_vocab *vocab_handle(gmpy_vocab *self)
{
    if (!self->v)
        closed_error("vocabulary");
    return self->v;
}

/* Fills ids from a sequence of ints (NULL, 0 for None). Returns 0 or -1. */
static int id_list(PyObject *obj, const char *what, uint32_t **ids, size_t *n)
{
    *ids = NULL;
    *n = 0;
    if (!obj || obj == Py_None)
        return 0;
    PyObject *seq = PySequence_Fast(obj, what);
    if (!seq)
        return -1;
    Py_ssize_t len = PySequence_Fast_GET_SIZE(seq);
    *ids = PyMem_Malloc(sizeof **ids * (size_t)(len ? len : 1));
    if (!*ids) {
        Py_DECREF(seq);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < len; i++) {
        unsigned long x = PyLong_AsUnsignedLong(PySequence_Fast_GET_ITEM(seq, i));
        if (x == (unsigned long)-1 && PyErr_Occurred()) {
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError, "%s: item %zd is not a token id (an int in 0..2^32-1)",
                         what, i);
            goto fail;
        }
        if (x > UINT32_MAX) {
            PyErr_Format(PyExc_ValueError, "%s: item %zd = %lu is not a token id", what, i, x);
            goto fail;
        }
        (*ids)[i] = (uint32_t)x;
    }
    *n = (size_t)len;
    Py_DECREF(seq);
    return 0;
fail:
    Py_DECREF(seq);
    PyMem_Free(*ids);
    *ids = NULL;
    return -1;
}

static int vocab_size_arg(PyObject *obj, uint32_t *out)
{
    *out = 0;
    if (!obj || obj == Py_None)
        return 0;
    long x = PyLong_AsLong(obj);
    if (x == -1 && PyErr_Occurred())
        return -1;
    if (x < 0 || x > (long)UINT32_MAX) {
        PyErr_Format(PyExc_ValueError, "vocab_size must be a token count, not %ld", x);
        return -1;
    }
    *out = (uint32_t)x;
    return 0;
}

static PyObject *mod_vocab_from_file(PyObject *mod, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"path", "vocab_size", "extra_eos_ids", NULL};
    PyObject *path = NULL, *size_obj = Py_None, *eos_obj = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O&|OO:vocab_from_file", kwlist, path_arg, &path,
                                     &size_obj, &eos_obj))
        return NULL;
    gm_vocab_options opts;
    gm_vocab_options_init_defaults(&opts);
    uint32_t *eos = NULL;
    size_t neos = 0;
    if (vocab_size_arg(size_obj, &opts.model_vocab_size) < 0 ||
        id_list(eos_obj, "stop_token_ids", &eos, &neos) < 0) {
        Py_DECREF(path);
        return NULL;
    }
    opts.extra_eos_ids = eos;
    opts.n_extra_eos_ids = neos;
    gm_vocab *v = NULL;
    gm_error err;
    gm_status st;
    Py_BEGIN_ALLOW_THREADS
    st = gm_vocab_create_from_file(PyBytes_AS_STRING(path), &opts, &v, &err);
    Py_END_ALLOW_THREADS
    PyMem_Free(eos);
    Py_DECREF(path);
    return st == GM_OK ? vocab_wrap(v) : gmpy_raise(&err);
}

static PyObject *mod_vocab_from_tokens(PyObject *mod, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"tokens", "eos_ids", "special", "vocab_size", NULL};
    PyObject *tokens_obj, *eos_obj, *special_obj = Py_None, *size_obj = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|OO:vocab_from_tokens", kwlist, &tokens_obj,
                                     &eos_obj, &special_obj, &size_obj))
        return NULL;
    PyObject *seq = PySequence_Fast(tokens_obj, "tokens must be a sequence of bytes");
    if (!seq)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
    PyObject *special_seq = NULL;
    const uint8_t **toks = PyMem_Calloc((size_t)(n ? n : 1), sizeof *toks);
    size_t *lens = PyMem_Calloc((size_t)(n ? n : 1), sizeof *lens);
    bool *special = NULL;
    uint32_t *eos = NULL;
    size_t neos = 0;
    gm_vocab_options opts;
    gm_vocab_options_init_defaults(&opts);
    PyObject *result = NULL;
    if (!toks || !lens) {
        PyErr_NoMemory();
        goto done;
    }
    if (n > (Py_ssize_t)UINT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "too many tokens");
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *t = PySequence_Fast_GET_ITEM(seq, i);
        if (!PyBytes_Check(t)) {
            PyErr_Format(PyExc_TypeError, "token %zd is %.80s, not bytes", i, Py_TYPE(t)->tp_name);
            goto done;
        }
        toks[i] = (const uint8_t *)PyBytes_AS_STRING(t);
        lens[i] = (size_t)PyBytes_GET_SIZE(t);
    }
    if (special_obj != Py_None) {
        special_seq = PySequence_Fast(special_obj, "special must be a sequence of bools");
        if (!special_seq)
            goto done;
        if (PySequence_Fast_GET_SIZE(special_seq) != n) {
            PyErr_Format(PyExc_ValueError, "special has %zd flags for %zd tokens",
                         PySequence_Fast_GET_SIZE(special_seq), n);
            goto done;
        }
        special = PyMem_Calloc((size_t)(n ? n : 1), sizeof *special);
        if (!special) {
            PyErr_NoMemory();
            goto done;
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            int b = PyObject_IsTrue(PySequence_Fast_GET_ITEM(special_seq, i));
            if (b < 0)
                goto done;
            special[i] = b;
        }
    }
    if (id_list(eos_obj, "stop_token_ids", &eos, &neos) < 0 ||
        vocab_size_arg(size_obj, &opts.model_vocab_size) < 0)
        goto done;
    gm_vocab *v = NULL;
    gm_error err;
    gm_status st = gm_vocab_create_from_tokens(toks, lens, (uint32_t)n, special, eos, neos, &opts, &v,
                                               &err);
    result = st == GM_OK ? vocab_wrap(v) : gmpy_raise(&err);
done:
    Py_DECREF(seq);
    Py_XDECREF(special_seq);
    PyMem_Free(toks);
    PyMem_Free(lens);
    PyMem_Free(special);
    PyMem_Free(eos);
    return result;
}

static PyObject *vocab_get_size(gmpy_vocab *self, void *closure)
{
    gm_vocab *v = vocab_handle(self);
    return v ? PyLong_FromUnsignedLong(gm_vocab_size(v)) : NULL;
}

static PyObject *vocab_get_eos_ids(gmpy_vocab *self, void *closure)
{
    gm_vocab *v = vocab_handle(self);
    if (!v)
        return NULL;
    const uint32_t *ids;
    size_t n = gm_vocab_eos_ids(v, &ids);
    return gmpy_id_list(ids, n);
}

static PyObject *vocab_token(gmpy_vocab *self, PyObject *arg)
{
    gm_vocab *v = vocab_handle(self);
    if (!v)
        return NULL;
    long id = PyLong_AsLong(arg);
    if (id == -1 && PyErr_Occurred())
        return NULL;
    size_t len;
    const uint8_t *b = id < 0 || id > (long)UINT32_MAX ? NULL : gm_vocab_token(v, (uint32_t)id, &len);
    if (!b) {
        PyErr_Format(PyExc_IndexError, "token id %ld is out of range (vocabulary of %u ids)", id,
                     gm_vocab_size(v));
        return NULL;
    }
    return PyBytes_FromStringAndSize((const char *)b, (Py_ssize_t)len);
}

/* Concatenated bytes of a sequence of ids. */
static PyObject *vocab_decode(gmpy_vocab *self, PyObject *arg)
{
    gm_vocab *v = vocab_handle(self);
    if (!v)
        return NULL;
    uint32_t *ids;
    size_t n;
    if (id_list(arg, "ids", &ids, &n) < 0)
        return NULL;
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        size_t len;
        if (!gm_vocab_token(v, ids[i], &len)) {
            PyErr_Format(PyExc_IndexError, "ids[%zu] = %u is out of range (vocabulary of %u ids)", i,
                         ids[i], gm_vocab_size(v));
            PyMem_Free(ids);
            return NULL;
        }
        total += len;
    }
    PyObject *out = PyBytes_FromStringAndSize(NULL, (Py_ssize_t)total);
    if (out) {
        char *p = PyBytes_AS_STRING(out);
        for (size_t i = 0; i < n; i++) {
            size_t len;
            const uint8_t *b = gm_vocab_token(v, ids[i], &len);
            memcpy(p, b, len);
            p += len;
        }
    }
    PyMem_Free(ids);
    return out;
}

/* Hugging Face-exact encoding of text (str as UTF-8, or bytes) into ids. */
static PyObject *vocab_encode(gmpy_vocab *self, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"text", "special_as_text", NULL};
    const char *text;
    Py_ssize_t len;
    int special_as_text = 0;
    gm_vocab *v = vocab_handle(self);
    if (!v || !PyArg_ParseTupleAndKeywords(args, kw, "s#|$p:encode", kwlist, &text, &len,
                                           &special_as_text))
        return NULL;
    gm_encode_options o = {.special_as_text = special_as_text};
    uint32_t *ids = NULL;
    size_t n = 0;
    gm_error err;
    gm_status st;
    Py_BEGIN_ALLOW_THREADS
    st = gm_vocab_encode(v, text, (size_t)len, &o, &ids, &n, &err);
    Py_END_ALLOW_THREADS
    if (st != GM_OK)
        return gmpy_raise(&err);
    PyObject *list = gmpy_id_list(ids, n);
    gm_vocab_free_ids(v, ids);
    return list;
}

static PyObject *vocab_close(gmpy_vocab *self, PyObject *unused)
{
    gm_vocab_destroy(self->v);
    self->v = NULL;
    Py_RETURN_NONE;
}

static PyObject *vocab_to_bytes(gmpy_vocab *self, PyObject *unused)
{
    gm_vocab *v = vocab_handle(self);
    if (!v)
        return NULL;
    uint8_t *bytes = NULL;
    size_t len = 0;
    gm_error err;
    if (gm_vocab_save_bytes(v, &bytes, &len, &err) != GM_OK)
        return gmpy_raise(&err);
    PyObject *out = PyBytes_FromStringAndSize((const char *)bytes, (Py_ssize_t)len);
    gm_vocab_free_bytes(v, bytes);
    return out;
}

static PyObject *mod_vocab_from_bytes(PyObject *mod, PyObject *arg)
{
    Py_buffer buf;
    if (PyObject_GetBuffer(arg, &buf, PyBUF_SIMPLE) < 0)
        return NULL;
    gm_vocab *v = NULL;
    gm_error err;
    gm_status st;
    Py_BEGIN_ALLOW_THREADS
    st = gm_vocab_load_bytes(buf.buf, (size_t)buf.len, NULL, &v, &err);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&buf);
    return st == GM_OK ? vocab_wrap(v) : gmpy_raise(&err);
}

static PyMethodDef vocab_methods[] = {
    {"to_bytes", (PyCFunction)vocab_to_bytes, METH_NOARGS,
     "to_bytes() -> bytes: the vocabulary, exactly (vocab_from_bytes reads them)."},
    {"token", (PyCFunction)vocab_token, METH_O, "token(id) -> bytes: the raw bytes of one token."},
    {"decode", (PyCFunction)vocab_decode, METH_O, "decode(ids) -> bytes: the tokens' bytes joined."},
    {"encode", (PyCFunction)(void (*)(void))vocab_encode, METH_VARARGS | METH_KEYWORDS,
     "encode(text, *, special_as_text=False) -> list[int]: Hugging Face's encoding."},
    {"close", (PyCFunction)vocab_close, METH_NOARGS, "Releases the C vocabulary (idempotent)."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef vocab_getset[] = {
    {"size", (getter)vocab_get_size, NULL, "Number of token ids (mask bits).", NULL},
    {"eos_ids", (getter)vocab_get_eos_ids, NULL, "End-of-sequence ids, sorted.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject gmpy_vocab_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "gramask._core.Vocab",
    .tp_basicsize = sizeof(gmpy_vocab),
    .tp_dealloc = (destructor)vocab_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A tokenizer vocabulary (C handle); use gramask.TokenizerInfo.",
    .tp_methods = vocab_methods,
    .tp_getset = vocab_getset,
};

/* --------------------------------------------------------------- grammar */

/* Warnings reported while a grammar is built without the GIL, kept for after. */
typedef struct warning_list {
    char **msgs;
    size_t n, cap;
} warning_list;

static void collect_warning(void *ud, const gm_error *w)
{
    warning_list *l = ud;
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 8;
        char **msgs = realloc(l->msgs, cap * sizeof *msgs);
        if (!msgs)
            return;
        l->msgs = msgs;
        l->cap = cap;
    }
    char *copy = strdup(w->message);
    if (copy)
        l->msgs[l->n++] = copy;
}

/* Frees the list; returns its messages as a Python list (NULL on error). */
static PyObject *warnings_to_list(warning_list *l)
{
    PyObject *list = PyList_New(0);
    for (size_t i = 0; i < l->n; i++) {
        if (list) {
            PyObject *s = PyUnicode_DecodeUTF8(l->msgs[i], (Py_ssize_t)strlen(l->msgs[i]), "replace");
            if (!s || PyList_Append(list, s) < 0)
                Py_CLEAR(list);
            Py_XDECREF(s);
        }
        free(l->msgs[i]);
    }
    free(l->msgs);
    return list;
}

static PyObject *grammar_wrap(gm_grammar *g, warning_list *warnings)
{
    PyObject *list = warnings_to_list(warnings);
    gmpy_grammar *self = list ? PyObject_New(gmpy_grammar, &gmpy_grammar_type) : NULL;
    if (!self) {
        Py_XDECREF(list);
        gm_grammar_destroy(g);
        return NULL;
    }
    self->g = g;
    self->warnings = list;
    return (PyObject *)self;
}

/* The Python result of a grammar constructor: the grammar, or the error's exception. */
static PyObject *grammar_result(gm_status st, gm_grammar *g, warning_list *w, const gm_error *err)
{
    if (st == GM_OK)
        return grammar_wrap(g, w);
    PyObject *unused = warnings_to_list(w);
    Py_XDECREF(unused);
    return gmpy_raise(err);
}

static void grammar_dealloc(gmpy_grammar *self)
{
    gm_grammar_destroy(self->g);
    Py_XDECREF(self->warnings);
    PyObject_Free(self);
}

/* Shared options of the grammar constructors. */
typedef struct grammar_args {
    int format;
    PyObject *start;          /* str or None */
    int lark_conflicts;
    int no_file_imports;
    const char *lexer;        /* "basic", "contextual" or NULL (basic) */
} grammar_args;

static int grammar_options(const grammar_args *a, gm_grammar_options *o, warning_list *w)
{
    gm_grammar_options_init_defaults(o);
    if (a->format < GM_FORMAT_AUTO || a->format > GM_FORMAT_REGEX) {
        PyErr_Format(PyExc_ValueError, "unknown grammar format %d", a->format);
        return -1;
    }
    o->format = (gm_grammar_format)a->format;
    if (a->start && a->start != Py_None) {
        o->start = PyUnicode_AsUTF8(a->start);
        if (!o->start)
            return -1;
    }
    o->conflicts = a->lark_conflicts ? GM_CONFLICTS_LARK : GM_CONFLICTS_ERROR;
    o->no_file_imports = a->no_file_imports;
    if (!a->lexer || !strcmp(a->lexer, "basic")) {
        o->lexer = GM_LEXER_BASIC;
    } else if (!strcmp(a->lexer, "contextual")) {
        o->lexer = GM_LEXER_CONTEXTUAL;
    } else {
        PyErr_Format(PyExc_ValueError, "lexer must be 'basic' or 'contextual', not '%s'", a->lexer);
        return -1;
    }
    o->warn = collect_warning;
    o->warn_ud = w;
    return 0;
}

static PyObject *mod_grammar_create(PyObject *mod, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"text", "name", "format", "start", "lark_conflicts",
                             "no_file_imports", "lexer", NULL};
    const char *text, *name = NULL;
    Py_ssize_t len;
    grammar_args a = {0, Py_None, 0, 0, NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "s#|z$iOppz:grammar_create", kwlist, &text, &len,
                                     &name, &a.format, &a.start, &a.lark_conflicts,
                                     &a.no_file_imports, &a.lexer))
        return NULL;
    gm_grammar_options o;
    warning_list w = {0};
    if (grammar_options(&a, &o, &w) < 0)
        return NULL;
    gm_grammar *g = NULL;
    gm_error err;
    gm_status st;
    Py_BEGIN_ALLOW_THREADS
    st = gm_grammar_create(text, (size_t)len, name, &o, &g, &err);
    Py_END_ALLOW_THREADS
    return grammar_result(st, g, &w, &err);
}

static PyObject *mod_grammar_from_file(PyObject *mod, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"path", "format", "start", "lark_conflicts", "no_file_imports",
                             "lexer", NULL};
    PyObject *path = NULL;
    grammar_args a = {0, Py_None, 0, 0, NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O&|$iOppz:grammar_from_file", kwlist, path_arg,
                                     &path, &a.format, &a.start, &a.lark_conflicts,
                                     &a.no_file_imports, &a.lexer))
        return NULL;
    gm_grammar_options o;
    warning_list w = {0};
    if (grammar_options(&a, &o, &w) < 0) {
        Py_DECREF(path);
        return NULL;
    }
    gm_grammar *g = NULL;
    gm_error err;
    gm_status st;
    Py_BEGIN_ALLOW_THREADS
    st = gm_grammar_create_from_file(PyBytes_AS_STRING(path), &o, &g, &err);
    Py_END_ALLOW_THREADS
    Py_DECREF(path);
    return grammar_result(st, g, &w, &err);
}

static PyObject *mod_grammar_bundled(PyObject *mod, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"name", "start", "lark_conflicts", "lexer", NULL};
    const char *name;
    grammar_args a = {0, Py_None, 0, 0, NULL};
    if (!PyArg_ParseTupleAndKeywords(args, kw, "s|$Opz:grammar_bundled", kwlist, &name, &a.start,
                                     &a.lark_conflicts, &a.lexer))
        return NULL;
    gm_grammar_options o;
    warning_list w = {0};
    if (grammar_options(&a, &o, &w) < 0)
        return NULL;
    gm_grammar *g = NULL;
    gm_error err;
    gm_status st;
    Py_BEGIN_ALLOW_THREADS
    st = gm_grammar_create_bundled(name, &o, &g, &err);
    Py_END_ALLOW_THREADS
    return grammar_result(st, g, &w, &err);
}

/* A grammar from a JSON Schema's text (gm_grammar_from_json_schema). */
static PyObject *mod_grammar_from_json_schema(PyObject *mod, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"schema", "whitespace", "indent", "max_ws_run", "any_order", "lenient",
                             "draft", "item_separator", "key_separator", NULL};
    const char *text, *item_sep = NULL, *key_sep = NULL;
    Py_ssize_t len;
    int whitespace = GM_SCHEMA_WS_FLEXIBLE, any_order = 0, lenient = 0, draft = 0;
    unsigned int indent = 0, max_ws_run = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "s#|$iIIppizz:grammar_from_json_schema", kwlist,
                                     &text, &len, &whitespace, &indent, &max_ws_run, &any_order,
                                     &lenient, &draft, &item_sep, &key_sep))
        return NULL;
    if (whitespace < GM_SCHEMA_WS_FLEXIBLE || whitespace > GM_SCHEMA_WS_INDENT) {
        PyErr_Format(PyExc_ValueError, "unknown whitespace layout %d", whitespace);
        return NULL;
    }
    gm_schema_options o;
    gm_schema_options_init_defaults(&o);
    warning_list w = {0};
    o.whitespace = (gm_schema_whitespace)whitespace;
    if (indent)
        o.indent = indent;
    if (max_ws_run)
        o.max_ws_run = max_ws_run;
    o.any_order = any_order;
    o.lenient = lenient;
    o.draft = (gm_schema_draft)draft;
    o.item_separator = item_sep;
    o.key_separator = key_sep;
    o.warn = collect_warning;
    o.warn_ud = &w;
    gm_grammar *g = NULL;
    gm_error err;
    gm_status st;
    Py_BEGIN_ALLOW_THREADS
    st = gm_grammar_from_json_schema(text, (size_t)len, &o, &g, &err);
    Py_END_ALLOW_THREADS
    return grammar_result(st, g, &w, &err);
}

/* A grammar from a structural tag's JSON text (gm_grammar_from_structural_tag). */
static PyObject *mod_grammar_from_structural_tag(PyObject *mod, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"tag", NULL};
    const char *text;
    Py_ssize_t len;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "s#:grammar_from_structural_tag", kwlist, &text,
                                     &len))
        return NULL;
    gm_structural_tag_options o;
    gm_structural_tag_options_init_defaults(&o);
    warning_list w = {0};
    o.schema.warn = collect_warning;
    o.schema.warn_ud = &w;
    gm_grammar *g = NULL;
    gm_error err;
    gm_status st;
    Py_BEGIN_ALLOW_THREADS
    st = gm_grammar_from_structural_tag(text, (size_t)len, &o, &g, &err);
    Py_END_ALLOW_THREADS
    return grammar_result(st, g, &w, &err);
}

/* XGrammar's Grammar.union / Grammar.concat (gm_grammar_combine): grammars, concat. */
static PyObject *mod_grammar_combine(PyObject *mod, PyObject *args)
{
    PyObject *seq;
    int concat;
    if (!PyArg_ParseTuple(args, "Op:grammar_combine", &seq, &concat))
        return NULL;
    PyObject *fast = PySequence_Fast(seq, "grammar_combine: expected a sequence of grammars");
    if (!fast)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    gm_grammar **gs = PyMem_Calloc(n ? (size_t)n : 1, sizeof *gs);
    if (!gs) {
        Py_DECREF(fast);
        return PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = PySequence_Fast_GET_ITEM(fast, i);
        if (!PyObject_TypeCheck(o, &gmpy_grammar_type)) {
            PyMem_Free(gs);
            Py_DECREF(fast);
            return PyErr_Format(PyExc_TypeError, "grammar_combine: item %zd is not a grammar", i);
        }
        gs[i] = ((gmpy_grammar *)o)->g;
    }
    gm_grammar *g = NULL;
    warning_list w = {0};
    gm_error err;
    gm_status st;
    Py_BEGIN_ALLOW_THREADS
    st = gm_grammar_combine(gs, (size_t)n, concat ? GM_COMBINE_CONCAT : GM_COMBINE_UNION, NULL, &g,
                            &err);
    Py_END_ALLOW_THREADS
    PyMem_Free(gs);
    Py_DECREF(fast);
    return grammar_result(st, g, &w, &err);
}

/* XGrammar's Lark dialect (gm_grammar_link): main, placeholder rule names, grammars. */
static PyObject *mod_grammar_link(PyObject *mod, PyObject *args)
{
    PyObject *main_o, *names_o, *parts_o;
    if (!PyArg_ParseTuple(args, "O!OO:grammar_link", &gmpy_grammar_type, &main_o, &names_o,
                          &parts_o))
        return NULL;
    PyObject *names = PySequence_Fast(names_o, "grammar_link: expected a sequence of names");
    if (!names)
        return NULL;
    PyObject *parts = PySequence_Fast(parts_o, "grammar_link: expected a sequence of grammars");
    if (!parts) {
        Py_DECREF(names);
        return NULL;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(parts);
    const char **ns = PyMem_Calloc(n ? (size_t)n : 1, sizeof *ns);
    gm_grammar **gs = PyMem_Calloc(n ? (size_t)n : 1, sizeof *gs);
    PyObject *res = NULL;
    if (!ns || !gs) {
        PyErr_NoMemory();
        goto done;
    }
    if (PySequence_Fast_GET_SIZE(names) != n) {
        PyErr_SetString(PyExc_ValueError, "grammar_link: as many names as grammars");
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *o = PySequence_Fast_GET_ITEM(parts, i);
        if (!PyObject_TypeCheck(o, &gmpy_grammar_type)) {
            PyErr_Format(PyExc_TypeError, "grammar_link: part %zd is not a grammar", i);
            goto done;
        }
        gs[i] = ((gmpy_grammar *)o)->g;
        ns[i] = PyUnicode_AsUTF8(PySequence_Fast_GET_ITEM(names, i));
        if (!ns[i])
            goto done;
    }
    gm_grammar *g = NULL;
    warning_list w = {0};
    gm_error err;
    gm_status st;
    const gm_grammar *mg = ((gmpy_grammar *)main_o)->g;
    Py_BEGIN_ALLOW_THREADS
    st = gm_grammar_link(mg, ns, gs, (size_t)n, NULL, &g, &err);
    Py_END_ALLOW_THREADS
    res = grammar_result(st, g, &w, &err);
done:
    PyMem_Free(ns);
    PyMem_Free(gs);
    Py_DECREF(names);
    Py_DECREF(parts);
    return res;
}

/* A grammar of one assistant turn with tool calls (gm_grammar_from_tools). */
static PyObject *mod_grammar_from_tools(PyObject *mod, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"tools", "format", "tool_choice", "tool_name", "parallel",
                             "reasoning", NULL};
    const char *text, *tool_name = NULL;
    Py_ssize_t len;
    int format = 0, choice = 0, parallel = -1, reasoning = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "s#i|$izii:grammar_from_tools", kwlist, &text, &len,
                                     &format, &choice, &tool_name, &parallel, &reasoning))
        return NULL;
    if (format < GM_TOOLS_LLAMA || format > GM_TOOLS_KIMI_K3_XML || choice < GM_TOOL_CHOICE_DEFAULT ||
        choice > GM_TOOL_CHOICE_NAMED || reasoning < GM_REASONING_ALLOWED ||
        reasoning > GM_REASONING_FORBIDDEN) {
        PyErr_SetString(PyExc_ValueError, "grammar_from_tools: an option is out of range");
        return NULL;
    }
    gm_tools_options o;
    gm_tools_options_init_defaults(&o);
    warning_list w = {0};
    o.format = (gm_tool_format)format;
    o.tool_choice = (gm_tool_choice)choice;
    o.tool_name = tool_name;
    o.parallel = parallel;
    o.reasoning = (gm_reasoning)reasoning;
    o.schema.warn = collect_warning;
    o.schema.warn_ud = &w;
    gm_grammar *g = NULL;
    gm_error err;
    gm_status st;
    Py_BEGIN_ALLOW_THREADS
    st = gm_grammar_from_tools(text, (size_t)len, &o, &g, &err);
    Py_END_ALLOW_THREADS
    return grammar_result(st, g, &w, &err);
}

static PyObject *grammar_get_engine(gmpy_grammar *self, void *closure)
{
    if (!self->g)
        return closed_error("grammar");
    return PyUnicode_FromString(gm_grammar_engine(self->g) == GM_ENGINE_EARLEY ? "earley" : "lalr");
}

static PyObject *grammar_get_warnings(gmpy_grammar *self, void *closure)
{
    return PyList_GetSlice(self->warnings, 0, PY_SSIZE_T_MAX);
}

static PyObject *grammar_close(gmpy_grammar *self, PyObject *unused)
{
    gm_grammar_destroy(self->g);
    self->g = NULL;
    Py_RETURN_NONE;
}

static PyMethodDef grammar_methods[] = {
    {"close", (PyCFunction)grammar_close, METH_NOARGS, "Releases the C grammar (idempotent)."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef grammar_getset[] = {
    {"engine", (getter)grammar_get_engine, NULL, "'lalr' or 'earley'.", NULL},
    {"warnings", (getter)grammar_get_warnings, NULL, "Warnings reported while building it.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject gmpy_grammar_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "gramask._core.Grammar",
    .tp_basicsize = sizeof(gmpy_grammar),
    .tp_dealloc = (destructor)grammar_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A grammar (C handle); use gramask.Grammar.",
    .tp_methods = grammar_methods,
    .tp_getset = grammar_getset,
};

/* -------------------------------------------------------------- compiled */

static PyObject *compiled_wrap(gm_compiled *c)
{
    gmpy_compiled *self = PyObject_New(gmpy_compiled, &gmpy_compiled_type);
    if (!self) {
        gm_compiled_destroy(c);
        return NULL;
    }
    self->c = c;
    return (PyObject *)self;
}

static void compiled_dealloc(gmpy_compiled *self)
{
    gm_compiled_destroy(self->c);
    PyObject_Free(self);
}

static gm_compiled *compiled_handle(gmpy_compiled *self)
{
    if (!self->c)
        closed_error("compiled grammar");
    return self->c;
}

gmpy_compiled *gmpy_compiled_of(PyObject *obj)
{
    if (PyObject_TypeCheck(obj, &gmpy_compiled_type)) {
        Py_INCREF(obj);
        return (gmpy_compiled *)obj;
    }
    PyObject *h = PyObject_GetAttrString(obj, "_handle");
    if (h && PyObject_TypeCheck(h, &gmpy_compiled_type))
        return (gmpy_compiled *)h;
    Py_XDECREF(h);
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError, "expected a gramask.CompiledGrammar, not %.100s",
                 Py_TYPE(obj)->tp_name);
    return NULL;
}

static PyObject *mod_compile(PyObject *mod, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"grammar", "vocab", "eager", NULL};
    gmpy_grammar *g;
    gmpy_vocab *v;
    int eager = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O!O!|p:compile", kwlist, &gmpy_grammar_type, &g,
                                     &gmpy_vocab_type, &v, &eager))
        return NULL;
    if (!g->g)
        return closed_error("grammar");
    if (!v->v)
        return closed_error("vocabulary");
    gm_compile_options o;
    gm_compile_options_init_defaults(&o);
    o.eager = eager;
    gm_compiled *c = NULL;
    gm_error err;
    gm_status st;
    Py_BEGIN_ALLOW_THREADS
    st = gm_compiled_create(g->g, v->v, &o, &c, &err);
    Py_END_ALLOW_THREADS
    return st == GM_OK ? compiled_wrap(c) : gmpy_raise(&err);
}

static PyObject *mod_compiled_load(PyObject *mod, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"path", "eager", NULL};
    PyObject *path = NULL;
    int eager = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O&|p:compiled_load", kwlist, path_arg, &path, &eager))
        return NULL;
    gm_compile_options o;
    gm_compile_options_init_defaults(&o);
    o.eager = eager;
    gm_compiled *c = NULL;
    gm_error err;
    gm_status st;
    Py_BEGIN_ALLOW_THREADS
    st = gm_compiled_load(PyBytes_AS_STRING(path), &o, &c, &err);
    Py_END_ALLOW_THREADS
    Py_DECREF(path);
    return st == GM_OK ? compiled_wrap(c) : gmpy_raise(&err);
}

static PyObject *mod_compiled_from_bytes(PyObject *mod, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"data", "eager", NULL};
    Py_buffer buf;
    int eager = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "y*|p:compiled_from_bytes", kwlist, &buf, &eager))
        return NULL;
    gm_compile_options o;
    gm_compile_options_init_defaults(&o);
    o.eager = eager;
    gm_compiled *c = NULL;
    gm_error err;
    gm_status st;
    Py_BEGIN_ALLOW_THREADS
    st = gm_compiled_load_bytes(buf.buf, (size_t)buf.len, &o, &c, &err);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&buf);
    return st == GM_OK ? compiled_wrap(c) : gmpy_raise(&err);
}

static PyObject *compiled_to_bytes(gmpy_compiled *self, PyObject *unused)
{
    gm_compiled *c = compiled_handle(self);
    if (!c)
        return NULL;
    uint8_t *bytes = NULL;
    size_t len = 0;
    gm_error err;
    gm_status st;
    Py_BEGIN_ALLOW_THREADS
    st = gm_compiled_save_bytes(c, &bytes, &len, &err);
    Py_END_ALLOW_THREADS
    if (st != GM_OK)
        return gmpy_raise(&err);
    PyObject *out = PyBytes_FromStringAndSize((const char *)bytes, (Py_ssize_t)len);
    gm_compiled_free_bytes(c, bytes);
    return out;
}

static PyObject *compiled_save(gmpy_compiled *self, PyObject *arg)
{
    gm_compiled *c = compiled_handle(self);
    PyObject *path = NULL;
    if (!c || !path_arg(arg, &path))
        return NULL;
    gm_error err;
    gm_status st;
    Py_BEGIN_ALLOW_THREADS
    st = gm_compiled_save(c, PyBytes_AS_STRING(path), &err);
    Py_END_ALLOW_THREADS
    Py_DECREF(path);
    if (st != GM_OK)
        return gmpy_raise(&err);
    Py_RETURN_NONE;
}

static PyObject *compiled_get_vocab_size(gmpy_compiled *self, void *closure)
{
    gm_compiled *c = compiled_handle(self);
    return c ? PyLong_FromUnsignedLong(gm_compiled_vocab_size(c)) : NULL;
}

static PyObject *compiled_get_mask_words(gmpy_compiled *self, void *closure)
{
    gm_compiled *c = compiled_handle(self);
    return c ? PyLong_FromSize_t(gm_compiled_mask_words(c)) : NULL;
}

static PyObject *compiled_vocab(gmpy_compiled *self, PyObject *unused)
{
    gm_compiled *c = compiled_handle(self);
    return c ? vocab_wrap(gm_vocab_retain((gm_vocab *)gm_compiled_vocab(c))) : NULL;
}

static PyObject *compiled_stats(gmpy_compiled *self, PyObject *unused)
{
    gm_compiled *c = compiled_handle(self);
    if (!c)
        return NULL;
    gm_compiled_stats s;
    gm_compiled_get_stats(c, &s);
    if (s.engine == GM_ENGINE_EARLEY)
        return Py_BuildValue("{sssIsIsIsIsKsIsnsn}", "engine", "earley", "rules", s.rules,
                             "fsm_states", s.fsm_states, "cache_entries", s.cache_entries,
                             "cross_hits", s.cross_hits, "uncertain_tokens",
                             (unsigned long long)s.uncertain_tokens, "vocab_size", s.vocab_size,
                             "table_bytes", (Py_ssize_t)s.table_bytes, "memory_bytes",
                             (Py_ssize_t)s.memory_bytes);
    return Py_BuildValue("{sssIsIsIsIsIsKsIsnsn}", "engine", "lalr", "lexer_states", s.lexer_states,
                         "terminals", s.terminals, "lr_states", s.lr_states, "productions",
                         s.productions, "profiles_built", s.profiles_built, "classes",
                         (unsigned long long)s.classes, "vocab_size", s.vocab_size, "table_bytes",
                         (Py_ssize_t)s.table_bytes, "memory_bytes", (Py_ssize_t)s.memory_bytes);
}

static PyObject *compiled_close(gmpy_compiled *self, PyObject *unused)
{
    gm_compiled_destroy(self->c);
    self->c = NULL;
    Py_RETURN_NONE;
}

static PyMethodDef compiled_methods[] = {
    {"save", (PyCFunction)compiled_save, METH_O, "save(path): writes a .gmc file."},
    {"to_bytes", (PyCFunction)compiled_to_bytes, METH_NOARGS,
     "to_bytes(): the bytes save writes, in memory."},
    {"vocab", (PyCFunction)compiled_vocab, METH_NOARGS, "The vocabulary it was compiled for."},
    {"stats", (PyCFunction)compiled_stats, METH_NOARGS, "Table sizes, as a dict."},
    {"close", (PyCFunction)compiled_close, METH_NOARGS, "Drops this reference (idempotent)."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef compiled_getset[] = {
    {"vocab_size", (getter)compiled_get_vocab_size, NULL, "Token ids (mask bits).", NULL},
    {"mask_words", (getter)compiled_get_mask_words, NULL, "int32 words of one mask row.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject gmpy_compiled_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "gramask._core.Compiled",
    .tp_basicsize = sizeof(gmpy_compiled),
    .tp_dealloc = (destructor)compiled_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A compiled grammar (C handle); use gramask.CompiledGrammar.",
    .tp_methods = compiled_methods,
    .tp_getset = compiled_getset,
};

/* ------------------------------------------------------- module functions */

/* The vocabulary, grammar and compiled-grammar functions of the module
 * (module.c adds them beside its own). */
PyMethodDef gmpy_core_functions[] = {
    {"vocab_from_file", (PyCFunction)(void (*)(void))mod_vocab_from_file,
     METH_VARARGS | METH_KEYWORDS, "Loads a tokenizer.json (or a directory holding one)."},
    {"vocab_from_bytes", mod_vocab_from_bytes, METH_O,
     "A vocabulary from the bytes Vocab.to_bytes returned."},
    {"vocab_from_tokens", (PyCFunction)(void (*)(void))mod_vocab_from_tokens,
     METH_VARARGS | METH_KEYWORDS, "A vocabulary from a list of token byte strings."},
    {"grammar_create", (PyCFunction)(void (*)(void))mod_grammar_create,
     METH_VARARGS | METH_KEYWORDS, "A grammar from text."},
    {"grammar_from_file", (PyCFunction)(void (*)(void))mod_grammar_from_file,
     METH_VARARGS | METH_KEYWORDS, "A grammar from a file."},
    {"grammar_bundled", (PyCFunction)(void (*)(void))mod_grammar_bundled,
     METH_VARARGS | METH_KEYWORDS, "A grammar bundled with gramask."},
    {"grammar_from_json_schema", (PyCFunction)(void (*)(void))mod_grammar_from_json_schema,
     METH_VARARGS | METH_KEYWORDS, "A grammar from a JSON Schema's text."},
    {"grammar_link", (PyCFunction)mod_grammar_link, METH_VARARGS,
     "grammar_link(main, names, parts): main with rule names[i] replaced by parts[i]"},
    {"grammar_combine", (PyCFunction)mod_grammar_combine, METH_VARARGS,
     "grammar_combine(grammars, concat): their union, or their concatenation in order"},
    {"grammar_from_structural_tag", (PyCFunction)(void (*)(void))mod_grammar_from_structural_tag,
     METH_VARARGS | METH_KEYWORDS, "A grammar from a structural tag's JSON text."},
    {"grammar_from_tools", (PyCFunction)(void (*)(void))mod_grammar_from_tools,
     METH_VARARGS | METH_KEYWORDS, "A grammar of an assistant turn calling tools."},
    {"compile", (PyCFunction)(void (*)(void))mod_compile, METH_VARARGS | METH_KEYWORDS,
     "Compiles a grammar for a vocabulary."},
    {"compiled_load", (PyCFunction)(void (*)(void))mod_compiled_load, METH_VARARGS | METH_KEYWORDS,
     "Loads a .gmc file."},
    {"compiled_from_bytes", (PyCFunction)(void (*)(void))mod_compiled_from_bytes,
     METH_VARARGS | METH_KEYWORDS, "A compiled grammar from the bytes to_bytes returned."},
    {NULL, NULL, 0, NULL}};
