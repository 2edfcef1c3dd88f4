/*
 * Arrays for gramask._core: borrowing numpy arrays (buffer protocol) and
 * torch CPU tensors (DLPack) without importing either, and applying a token
 * bitmask to logits in place.
 */
#include "core.h" /* Python.h first, as Python requires */

#include <string.h>

/* DLPack's ABI (dlpack.h, v0.x, the `__dlpack__()` capsule "dltensor"). */
typedef struct {
    int32_t device_type;      /* 1 = CPU */
    int32_t device_id;
} dl_device;

typedef struct {
    uint8_t code;             /* 0 int, 1 uint, 2 float, 4 bfloat */
    uint8_t bits;
    uint16_t lanes;
} dl_dtype;

typedef struct {
    void *data;
    dl_device device;
    int32_t ndim;
    dl_dtype dtype;
    int64_t *shape;
    int64_t *strides;         /* in elements; NULL = compact row-major */
    uint64_t byte_offset;
} dl_tensor;

typedef struct dl_managed {
    dl_tensor dl_tensor;
    void *manager_ctx;
    void (*deleter)(struct dl_managed *self);
} dl_managed;

enum { DL_CPU = 1, DL_INT = 0, DL_UINT = 1, DL_FLOAT = 2, DL_BFLOAT = 4 };

static gmpy_dtype dtype_of_format(const char *f, Py_ssize_t itemsize)
{
    if (!f)
        return GMPY_OTHER; /* unsigned bytes */
    if (*f == '@' || *f == '=' || *f == '<')
        f++;
    if (f[0] == 0 || f[1] != 0)
        return GMPY_OTHER;
    switch (f[0]) {
    case 'i': case 'I': case 'l': case 'L':
        return itemsize == 4 ? GMPY_INT32 : GMPY_OTHER;
    case 'f':
        return itemsize == 4 ? GMPY_FLOAT32 : GMPY_OTHER;
    case 'd':
        return itemsize == 8 ? GMPY_FLOAT64 : GMPY_OTHER;
    case 'e':
        return itemsize == 2 ? GMPY_FLOAT16 : GMPY_OTHER;
    default:
        return GMPY_OTHER;
    }
}

static gmpy_dtype dtype_of_dl(dl_dtype t)
{
    if (t.lanes != 1)
        return GMPY_OTHER;
    if ((t.code == DL_INT || t.code == DL_UINT) && t.bits == 32)
        return GMPY_INT32;
    if (t.code == DL_FLOAT)
        return t.bits == 32 ? GMPY_FLOAT32 : t.bits == 64 ? GMPY_FLOAT64 : t.bits == 16 ? GMPY_FLOAT16
                                                                                         : GMPY_OTHER;
    if (t.code == DL_BFLOAT && t.bits == 16)
        return GMPY_BFLOAT16;
    return GMPY_OTHER;
}

static int from_dlpack(PyObject *obj, const char *what, gmpy_array *a)
{
    PyObject *capsule = PyObject_CallMethod(obj, "__dlpack__", NULL);
    if (!capsule)
        return -1;
    dl_managed *mt = PyCapsule_GetPointer(capsule, "dltensor");
    if (!mt) {
        Py_DECREF(capsule);
        return -1;
    }
    /* The capsule is ours now: renaming it tells its destructor not to delete it. */
    if (PyCapsule_SetName(capsule, "used_dltensor") < 0) {
        Py_DECREF(capsule);
        return -1;
    }
    a->capsule = capsule;
    a->managed = mt;
    dl_tensor *t = &mt->dl_tensor;
    if (t->device.device_type != DL_CPU) {
        PyErr_Format(PyExc_ValueError, "%s must be in CPU memory (DLPack device type %d); copy it "
                     "to the CPU first", what, (int)t->device.device_type);
        return -1;
    }
    if (t->ndim < 1 || t->ndim > 2) {
        PyErr_Format(PyExc_ValueError, "%s must have 1 or 2 dimensions, not %d", what, (int)t->ndim);
        return -1;
    }
    a->ndim = t->ndim;
    int64_t expect = 1;
    for (int d = t->ndim - 1; d >= 0; d--) {
        if (t->strides && t->shape[d] > 1 && t->strides[d] != expect) {
            PyErr_Format(PyExc_ValueError, "%s must be contiguous (row-major); call .contiguous() "
                         "first", what);
            return -1;
        }
        expect *= t->shape[d];
        a->shape[d] = (Py_ssize_t)t->shape[d];
    }
    a->dtype = dtype_of_dl(t->dtype);
    a->data = (char *)t->data + t->byte_offset;
    return 0;
}

/* obj.name() without building a bound method (vectorcall). */
static PyObject *call0(PyObject *obj, const char *name)
{
    PyObject *n = PyUnicode_InternFromString(name);
    if (!n)
        return NULL;
    PyObject *r = PyObject_VectorcallMethod(n, &obj, 1, NULL);
    Py_DECREF(n);
    return r;
}

/* Calls obj.name() and returns its result as a C long (-1 with an exception on failure). */
static long call_long(PyObject *obj, const char *name)
{
    PyObject *r = call0(obj, name);
    if (!r)
        return -1;
    long v = PyLong_AsLong(r);
    Py_DECREF(r);
    return v;
}

/* The gmpy_dtype of a torch dtype object: int32, float32, float64; GMPY_OTHER else (the
   DLPack path handles the rest). torch is imported already: a tensor exists. */
static gmpy_dtype torch_dtype(PyObject *dtype)
{
    static const char *const names[] = {"int32", "float32", "float64"};
    static const gmpy_dtype kinds[] = {GMPY_INT32, GMPY_FLOAT32, GMPY_FLOAT64};
    gmpy_dtype kind = GMPY_OTHER;
    PyObject *mod = PyDict_GetItemString(PyImport_GetModuleDict(), "torch"); /* borrowed */
    for (size_t i = 0; mod && kind == GMPY_OTHER && i < sizeof names / sizeof *names; i++) {
        PyObject *d = PyObject_GetAttrString(mod, names[i]);
        if (!d) {
            PyErr_Clear();
            break;
        }
        if (d == dtype)
            kind = kinds[i];
        Py_DECREF(d);
    }
    return kind;
}

/*
 * A torch.Tensor without DLPack: torch's __dlpack__() costs several microseconds (more
 * than a whole mask fill), these few calls a fraction of that. Only contiguous CPU tensors
 * of int32, float32 or float64; 0 when the fast path does not apply (the caller uses
 * DLPack), 1 when a is filled, -1 on error. Nothing but the GIL keeps the tensor's memory
 * valid (another thread could resize it): a->hold_gil tells the caller to keep it.
 */
static int from_torch(PyObject *obj, gmpy_array *a)
{
    if (strcmp(Py_TYPE(obj)->tp_name, "Tensor") != 0)
        return 0;
    long device = call_long(obj, "get_device"), contiguous;
    if (device == -1 && PyErr_Occurred())
        return -1;
    if (device != -1)
        return 0; /* not a CPU tensor: DLPack reports the device */
    if ((contiguous = call_long(obj, "is_contiguous")) == -1)
        return -1;
    PyObject *dt = PyObject_GetAttrString(obj, "dtype");
    if (!dt)
        return -1;
    gmpy_dtype dtype = torch_dtype(dt);
    Py_DECREF(dt);
    if (!contiguous || dtype == GMPY_OTHER)
        return 0;
    PyObject *size = call0(obj, "size");
    PyObject *ptr = size ? call0(obj, "data_ptr") : NULL;
    if (!ptr) {
        Py_XDECREF(size);
        return -1;
    }
    Py_ssize_t ndim = PyTuple_Check(size) ? PyTuple_GET_SIZE(size) : 0;
    int ok = ndim >= 1 && ndim <= 2;
    for (Py_ssize_t d = 0; ok && d < ndim; d++) {
        a->shape[d] = PyLong_AsSsize_t(PyTuple_GET_ITEM(size, d));
        ok = !(a->shape[d] == -1 && PyErr_Occurred());
    }
    void *data = ok ? PyLong_AsVoidPtr(ptr) : NULL;
    Py_DECREF(size);
    Py_DECREF(ptr);
    if (PyErr_Occurred())
        return -1;
    if (!ok || (!data && a->shape[0] * (ndim == 2 ? a->shape[1] : 1) != 0))
        return 0;
    a->ndim = (int)ndim;
    a->dtype = dtype;
    a->data = data;
    a->hold_gil = 1;
    return 1;
}

int gmpy_array_get(PyObject *obj, const char *what, gmpy_array *a)
{
    memset(a, 0, sizeof *a);
    if (PyObject_CheckBuffer(obj)) {
        if (PyObject_GetBuffer(obj, &a->view, PyBUF_WRITABLE | PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0) {
            PyObject *type, *value, *tb;
            PyErr_Fetch(&type, &value, &tb);
            PyErr_Format(PyExc_ValueError, "%s must be a writable C-contiguous array (%S)", what,
                         value ? value : Py_None);
            Py_XDECREF(type);
            Py_XDECREF(value);
            Py_XDECREF(tb);
            return -1;
        }
        a->has_view = 1;
        if (a->view.ndim < 1 || a->view.ndim > 2) {
            PyErr_Format(PyExc_ValueError, "%s must have 1 or 2 dimensions, not %d", what, a->view.ndim);
            gmpy_array_release(a);
            return -1;
        }
        a->ndim = a->view.ndim;
        for (int d = 0; d < a->ndim; d++)
            a->shape[d] = a->view.shape[d];
        a->dtype = dtype_of_format(a->view.format, a->view.itemsize);
        a->data = a->view.buf;
        return 0;
    }
    int fast = from_torch(obj, a);
    if (fast != 0)
        return fast > 0 ? 0 : -1;
    if (PyObject_HasAttrString(obj, "__dlpack__")) {
        if (from_dlpack(obj, what, a) < 0) {
            gmpy_array_release(a);
            return -1;
        }
        return 0;
    }
    PyErr_Format(PyExc_TypeError, "%s must be a numpy array or a torch CPU tensor, not %.100s", what,
                 Py_TYPE(obj)->tp_name);
    return -1;
}

void gmpy_array_release(gmpy_array *a)
{
    if (a->has_view)
        PyBuffer_Release(&a->view);
    a->has_view = 0;
    if (a->managed) {
        dl_managed *mt = a->managed;
        if (mt->deleter)
            mt->deleter(mt);
        a->managed = NULL;
    }
    Py_CLEAR(a->capsule);
}

uint32_t *gmpy_bitmask_row(const gmpy_array *a, Py_ssize_t index, size_t words)
{
    if (a->dtype != GMPY_INT32) {
        PyErr_SetString(PyExc_TypeError, "the bitmask must hold int32 (allocate it with "
                        "gramask.allocate_token_bitmask)");
        return NULL;
    }
    if ((size_t)a->shape[a->ndim - 1] != words) {
        PyErr_Format(PyExc_ValueError, "the bitmask rows have %zd words; this grammar's masks have %zu "
                     "(ceil(vocab_size / 32))", a->shape[a->ndim - 1], words);
        return NULL;
    }
    Py_ssize_t rows = a->ndim == 2 ? a->shape[0] : 1;
    if (index < 0 || index >= rows) {
        PyErr_Format(PyExc_IndexError, "bitmask row %zd is out of range (the bitmask has %zd row%s)",
                     index, rows, rows == 1 ? "" : "s");
        return NULL;
    }
    return (uint32_t *)a->data + (size_t)index * words;
}

/*
 * Sets every element of row[0..n) whose bit is 0 in mask to `neg`, the
 * bit pattern of -inf in the element type. Whole words of zeros (the usual
 * case: few tokens are allowed) are plain stores the compiler vectorizes; in
 * other words only the 0 bits are visited (a mask inside a string allows
 * nearly every token).
 */
#define DEFINE_MASK_ROW(NAME, T)                                                   \
    static void NAME(T *row, const uint32_t *mask, size_t n, T neg)                \
    {                                                                              \
        size_t full = n / 32;                                                      \
        for (size_t w = 0; w < full; w++) {                                        \
            uint32_t bits = mask[w];                                               \
            T *p = row + w * 32;                                                   \
            if (bits == UINT32_MAX)                                                \
                continue;                                                          \
            if (bits == 0) {                                                       \
                for (int k = 0; k < 32; k++)                                       \
                    p[k] = neg;                                                    \
                continue;                                                          \
            }                                                                      \
            for (uint32_t z = ~bits; z; z &= z - 1) /* each 0 bit */                \
                p[__builtin_ctz(z)] = neg;                                         \
        }                                                                          \
        for (size_t t = full * 32; t < n; t++)                                     \
            if (!((mask[t / 32] >> (t % 32)) & 1))                                 \
                row[t] = neg;                                                      \
    }
DEFINE_MASK_ROW(mask_row16, uint16_t)
DEFINE_MASK_ROW(mask_row32, uint32_t)
DEFINE_MASK_ROW(mask_row64, uint64_t)

static void mask_row(gmpy_dtype dt, void *row, const uint32_t *mask, size_t n)
{
    switch (dt) {
    case GMPY_FLOAT32:
        mask_row32(row, mask, n, 0xFF800000u);
        break;
    case GMPY_FLOAT64:
        mask_row64(row, mask, n, 0xFFF0000000000000ull);
        break;
    case GMPY_FLOAT16:
        mask_row16(row, mask, n, 0xFC00u);
        break;
    case GMPY_BFLOAT16:
        mask_row16(row, mask, n, 0xFF80u);
        break;
    default:
        break;
    }
}

static size_t dtype_size(gmpy_dtype dt)
{
    return dt == GMPY_FLOAT64 ? 8 : dt == GMPY_FLOAT16 || dt == GMPY_BFLOAT16 ? 2 : 4;
}

/* The row indices to mask: `indices` (checked against both arrays) or all of them. */
static Py_ssize_t *rows_to_mask(PyObject *indices, Py_ssize_t nlogits, Py_ssize_t nmask,
                                Py_ssize_t *count)
{
    Py_ssize_t n;
    Py_ssize_t *rows;
    if (indices == NULL || indices == Py_None) {
        if (nlogits != nmask) {
            PyErr_Format(PyExc_ValueError, "logits have %zd rows but the bitmask has %zd; pass "
                         "indices= to mask some rows", nlogits, nmask);
            return NULL;
        }
        rows = PyMem_Malloc(sizeof *rows * (size_t)(nlogits ? nlogits : 1));
        if (!rows)
            return (Py_ssize_t *)PyErr_NoMemory();
        for (Py_ssize_t i = 0; i < nlogits; i++)
            rows[i] = i;
        *count = nlogits;
        return rows;
    }
    PyObject *seq = PySequence_Fast(indices, "indices must be a sequence of ints");
    if (!seq)
        return NULL;
    n = PySequence_Fast_GET_SIZE(seq);
    rows = PyMem_Malloc(sizeof *rows * (size_t)(n ? n : 1));
    if (!rows) {
        Py_DECREF(seq);
        return (Py_ssize_t *)PyErr_NoMemory();
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t r = PyNumber_AsSsize_t(PySequence_Fast_GET_ITEM(seq, i), PyExc_IndexError);
        if (r == -1 && PyErr_Occurred())
            goto fail;
        if (r < 0 || r >= nlogits || r >= nmask) {
            PyErr_Format(PyExc_IndexError, "indices[%zd] = %zd is out of range (logits have %zd "
                         "rows, the bitmask %zd)", i, r, nlogits, nmask);
            goto fail;
        }
        rows[i] = r;
    }
    Py_DECREF(seq);
    *count = n;
    return rows;
fail:
    Py_DECREF(seq);
    PyMem_Free(rows);
    return NULL;
}

PyObject *gmpy_apply_token_bitmask_inplace(PyObject *mod, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"logits", "bitmask", "vocab_size", "indices", NULL};
    PyObject *logits_obj, *mask_obj, *vocab_obj = Py_None, *indices = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OO|$OO:apply_token_bitmask_inplace", kwlist,
                                     &logits_obj, &mask_obj, &vocab_obj, &indices))
        return NULL;
    gmpy_array logits, mask;
    if (gmpy_array_get(logits_obj, "logits", &logits) < 0)
        return NULL;
    if (gmpy_array_get(mask_obj, "bitmask", &mask) < 0) {
        gmpy_array_release(&logits);
        return NULL;
    }
    Py_ssize_t *rows = NULL, nrows = 0;
    if (logits.dtype == GMPY_INT32 || logits.dtype == GMPY_OTHER) {
        PyErr_SetString(PyExc_TypeError, "logits must hold float32, float64, float16 or bfloat16");
        goto fail;
    }
    if (mask.dtype != GMPY_INT32) {
        PyErr_SetString(PyExc_TypeError, "the bitmask must hold int32 (allocate it with "
                        "gramask.allocate_token_bitmask)");
        goto fail;
    }
    Py_ssize_t lv = logits.shape[logits.ndim - 1], mw = mask.shape[mask.ndim - 1];
    Py_ssize_t vocab = lv < mw * 32 ? lv : mw * 32;
    bool check_tail = vocab_obj == Py_None && mw > (lv + 31) / 32;
    if (vocab_obj != Py_None) {
        vocab = PyNumber_AsSsize_t(vocab_obj, PyExc_OverflowError);
        if (vocab == -1 && PyErr_Occurred())
            goto fail;
        if (vocab < 0 || vocab > lv || vocab > mw * 32) {
            PyErr_Format(PyExc_ValueError, "vocab_size %zd does not fit logits of %zd columns and a "
                         "bitmask of %zd words", vocab, lv, mw);
            goto fail;
        }
    }
    rows = rows_to_mask(indices, logits.ndim == 2 ? logits.shape[0] : 1,
                        mask.ndim == 2 ? mask.shape[0] : 1, &nrows);
    if (!rows)
        goto fail;
    /* A bitmask wider than the logits is XGrammar's usual case (its tail words zero, or
       padding ids masked out): only the first columns are masked. A row that allows an id
       the logits have no column for is another vocabulary's bitmask: refused, not
       applied silently. */
    for (Py_ssize_t i = 0; check_tail && i < nrows; i++) {
        const uint32_t *row = (const uint32_t *)mask.data + (size_t)rows[i] * (size_t)mw;
        for (Py_ssize_t id = lv; id < mw * 32; id++) {
            if (row[id / 32] >> (id % 32) & 1u) {
                PyErr_Format(PyExc_ValueError, "bitmask row %zd allows token %zd but the logits "
                             "have only %zd columns: a bitmask for another vocabulary? (give "
                             "vocab_size= to mask the first columns only)", rows[i], id, lv);
                PyMem_Free(rows);
                goto fail;
            }
        }
    }
    size_t esize = dtype_size(logits.dtype);
    PyThreadState *ts = logits.hold_gil ? NULL : gmpy_begin(&mask);
    for (Py_ssize_t i = 0; i < nrows; i++)
        mask_row(logits.dtype, (char *)logits.data + (size_t)rows[i] * (size_t)lv * esize,
                 (const uint32_t *)mask.data + (size_t)rows[i] * (size_t)mw, (size_t)vocab);
    gmpy_end(ts);
    PyMem_Free(rows);
    gmpy_array_release(&logits);
    gmpy_array_release(&mask);
    Py_RETURN_NONE;
fail:
    gmpy_array_release(&logits);
    gmpy_array_release(&mask);
    return NULL;
}
