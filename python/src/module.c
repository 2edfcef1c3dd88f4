/*
 * gramask._core, the module: its function table and its initialisation,
 * which readies the object types of core.c and matcher.c. It sits above
 * every other file of the extension, so none of them calls back into it.
 */
#include "core.h" /* Python.h first, as Python requires */

#ifndef GMPY_DATA_DIRS
#define GMPY_DATA_DIRS ""
#endif

static PyObject *mod_version(PyObject *mod, PyObject *unused)
{
    return PyUnicode_FromString(gm_version());
}

static PyObject *mod_status_name(PyObject *mod, PyObject *arg)
{
    long code = PyLong_AsLong(arg);
    if (code == -1 && PyErr_Occurred())
        return NULL;
    return PyUnicode_FromString(gm_status_name((gm_status)code));
}

static PyMethodDef module_methods[] = {
    {"version", mod_version, METH_NOARGS, "The C library's version."},
    {"status_name", mod_status_name, METH_O, "The name of a gm_status code."},
    {"apply_token_bitmask_inplace", (PyCFunction)(void (*)(void))gmpy_apply_token_bitmask_inplace,
     METH_VARARGS | METH_KEYWORDS, "Sets the logits of masked tokens to -inf, in place."},
    {"_bench_steps", gmpy_bench_steps, METH_VARARGS,
     "_bench_steps(matcher, bitmask, ids) -> ns: a fill + accept loop in C (bench/bench_python.py)."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "gramask._core", "The C library binding (see the gramask package).", -1,
    module_methods, NULL, NULL, NULL, NULL};

static int add_constants(PyObject *m)
{
    if (PyModule_AddStringConstant(m, "DATA_DIRS", GMPY_DATA_DIRS) < 0 ||
        PyModule_AddIntConstant(m, "FORMAT_AUTO", GM_FORMAT_AUTO) < 0 ||
        PyModule_AddIntConstant(m, "FORMAT_LARK", GM_FORMAT_LARK) < 0 ||
        PyModule_AddIntConstant(m, "FORMAT_GBNF", GM_FORMAT_GBNF) < 0 ||
        PyModule_AddIntConstant(m, "FORMAT_EBNF", GM_FORMAT_EBNF) < 0 ||
        PyModule_AddIntConstant(m, "FORMAT_REGEX", GM_FORMAT_REGEX) < 0)
        return -1;
    return 0;
}

PyMODINIT_FUNC PyInit__core(void)
{
    PyTypeObject *types[] = {&gmpy_vocab_type, &gmpy_grammar_type, &gmpy_compiled_type,
                             &gmpy_matcher_type, &gmpy_batch_type};
    const char *names[] = {"Vocab", "Grammar", "Compiled", "GrammarMatcher", "BatchGrammarMatcher"};
    for (size_t i = 0; i < sizeof types / sizeof *types; i++)
        if (PyType_Ready(types[i]) < 0)
            return NULL;
    if (gmpy_errors_load() < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module_def);
    if (!m)
        return NULL;
    if (PyModule_AddFunctions(m, gmpy_core_functions) < 0 || add_constants(m) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    for (size_t i = 0; i < sizeof types / sizeof *types; i++) {
        Py_INCREF(types[i]);
        if (PyModule_AddObject(m, names[i], (PyObject *)types[i]) < 0) {
            Py_DECREF(types[i]);
            Py_DECREF(m);
            return NULL;
        }
    }
    return m;
}
