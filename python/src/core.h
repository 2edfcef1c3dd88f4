/*
 * gramask._core: the CPython extension module binding include/gramask.h.
 * Shared between its files: the object types, the error conversion and the
 * array access (buffer protocol or DLPack) used by the mask functions.
 *
 * note [python handles]
 * Every Python object owns exactly one reference to its C handle and drops
 * it in close() or in its deallocator, whichever comes first; a closed
 * object raises ValueError on use. A matcher also holds a reference to the
 * Python compiled-grammar object it was made from (so the C compiled
 * grammar outlives it even without the C retain, and so `compiled_grammar`
 * can return it). A C call that runs without the GIL marks its matchers
 * busy first (while holding the GIL), and every method refuses a busy
 * matcher: two threads sharing one matcher get a clear RuntimeError, not a
 * data race in C.
 */
#ifndef GRAMASK_PY_CORE_H
#define GRAMASK_PY_CORE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdbool.h>
#include <stdint.h>

#include <gramask.h>

/* --- errors (core.c) --- */

/* Reads gramask.errors.BY_STATUS, the exception class of each status (module init). */
int gmpy_errors_load(void);

/* Raises the exception class of err->code with err's message and location; returns NULL. */
PyObject *gmpy_raise(const gm_error *err);
/* Raises `cls` (a gramask exception) with a message; returns NULL. */
PyObject *gmpy_raise_msg(gm_status code, const char *fmt, ...);

/* A list of Python ints from token ids (NULL with an exception). */
PyObject *gmpy_id_list(const uint32_t *ids, size_t n);

/* --- objects --- */

typedef struct gmpy_vocab {
    PyObject_HEAD
    gm_vocab *v;
} gmpy_vocab;

typedef struct gmpy_grammar {
    PyObject_HEAD
    gm_grammar *g;
    PyObject *warnings;       /* list of str: what the grammar build reported */
} gmpy_grammar;

typedef struct gmpy_compiled {
    PyObject_HEAD
    gm_compiled *c;
} gmpy_compiled;

typedef struct gmpy_matcher {
    PyObject_HEAD
    gm_matcher *m;
    PyObject *owner;          /* the compiled grammar object given to the constructor */
    gm_compiled *c;           /* borrowed from owner's handle (the matcher retains it) */
    size_t words;             /* mask words of c */
    uint32_t max_rollback;
    int busy;                 /* in a call that released the GIL: note [python handles] */
    uint32_t *scratch;        /* one mask row (words), made on the first fill into a torch
                                 tensor read without DLPack (see matcher_fill); or NULL */
} gmpy_matcher;

/* The vocabulary, grammar and compiled-grammar functions of the module (core.c). */
extern PyMethodDef gmpy_core_functions[];

extern PyTypeObject gmpy_vocab_type;
extern PyTypeObject gmpy_grammar_type;
extern PyTypeObject gmpy_compiled_type;
extern PyTypeObject gmpy_matcher_type;
extern PyTypeObject gmpy_batch_type;

/* The compiled handle of obj: a _core.Compiled or an object whose `_handle` is one. */
gmpy_compiled *gmpy_compiled_of(PyObject *obj);
/* The matcher's handle, or NULL with ValueError (closed) or RuntimeError (busy). */
gm_matcher *gmpy_matcher_handle(gmpy_matcher *self);

/* --- arrays (arrays.c) --- */

typedef enum gmpy_dtype {
    GMPY_INT32,
    GMPY_FLOAT32,
    GMPY_FLOAT64,
    GMPY_FLOAT16,
    GMPY_BFLOAT16,
    GMPY_OTHER
} gmpy_dtype;

/*
 * A C-contiguous CPU array borrowed from a Python object: through the
 * buffer protocol (numpy, array, bytearray, memoryview) or DLPack
 * (`__dlpack__`: torch CPU tensors). Release with gmpy_array_release.
 */
typedef struct gmpy_array {
    void *data;
    gmpy_dtype dtype;
    int ndim;                 /* 1 or 2 */
    Py_ssize_t shape[2];
    Py_buffer view;           /* when from the buffer protocol */
    int has_view;
    PyObject *capsule;        /* when from DLPack: the consumed capsule */
    void *managed;            /* its DLManagedTensor, deleted on release */
    int hold_gil;             /* a torch tensor read without DLPack: nothing keeps its memory
                                 alive but the GIL (another thread could resize it), so the
                                 caller must not release the GIL while it uses data */
} gmpy_array;

/* Releases the GIL unless a says it must be held (see hold_gil); pair with gmpy_end. */
static inline PyThreadState *gmpy_begin(const gmpy_array *a)
{
    return a->hold_gil ? NULL : PyEval_SaveThread();
}

static inline void gmpy_end(PyThreadState *ts)
{
    if (ts)
        PyEval_RestoreThread(ts);
}

/* Borrows obj as a writable 1-D or 2-D array; `what` names it in errors. 0 or -1. */
int gmpy_array_get(PyObject *obj, const char *what, gmpy_array *a);
void gmpy_array_release(gmpy_array *a);
/* Row `index` of a bitmask array for masks of `words` words, checked; NULL with an exception. */
uint32_t *gmpy_bitmask_row(const gmpy_array *a, Py_ssize_t index, size_t words);

PyObject *gmpy_apply_token_bitmask_inplace(PyObject *mod, PyObject *args, PyObject *kw);

/* --- bench.c --- */

PyObject *gmpy_bench_steps(PyObject *mod, PyObject *args);

#endif
