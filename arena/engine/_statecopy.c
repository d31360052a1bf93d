/* State._copy, compiled (an optional accelerator of the rules engine).
 *
 * Contract: copy(state) returns what arena/engine/state.py's State._copy returns: a new State
 * whose every slot holds the very object the given state's slot holds (tuples shared), except
 * the legal-action cache slot, which is None.  The Python method stays the definition and is what
 * runs when this module is not built (or ARENA_PURE_PYTHON is set); tests/engine/test_statecopy.py
 * compares the two.  configure(State, "_legal", State._copy) is called once by state.py: it reads the class's
 * slot offsets from its member table, so no field is named here and a field added to State is
 * copied without a change to this file.
 *
 * A State is copied on every step of a game (apply and apply_throw each make one): 23 slot
 * assignments in Python are most of a microsecond, a loop over the offsets is a few nanoseconds.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <string.h>

#define MAX_SLOTS 64

static PyTypeObject *state_type = NULL;  /* a strong reference once configured */
static Py_ssize_t offsets[MAX_SLOTS];    /* every object slot but the cache */
static int n_offsets = 0;
static Py_ssize_t cache_offset = -1;     /* the legal-action cache, set to None in a copy */
static PyObject *fallback = NULL;        /* State._copy, for anything but an exact State */

static PyObject *copy(PyObject *module, PyObject *state) {
    if (state_type == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "_statecopy.configure() was not called");
        return NULL;
    }
    if (Py_TYPE(state) != state_type) {  /* a subclass or another object: what the method does */
        return PyObject_CallOneArg(fallback, state);
    }
    /* tp_alloc zero-fills the slots and tracks the object for the cyclic GC (a collection that
       runs meanwhile sees NULL slots, which it skips). */
    PyObject *fresh = state_type->tp_alloc(state_type, 0);
    if (fresh == NULL) return NULL;
    for (int i = 0; i < n_offsets; i++) {
        PyObject *value = *(PyObject **)((char *)state + offsets[i]);
        if (value == NULL) {  /* an unset slot: the method says which (AttributeError) */
            Py_DECREF(fresh);
            return PyObject_CallOneArg(fallback, state);
        }
        Py_INCREF(value);
        *(PyObject **)((char *)fresh + offsets[i]) = value;
    }
    Py_INCREF(Py_None);
    *(PyObject **)((char *)fresh + cache_offset) = Py_None;
    return fresh;
}

/* configure(cls, cache_slot_name, method) -> number of slots copied; ``method`` (State._copy)
   copies whatever is not exactly ``cls``. */
static PyObject *configure(PyObject *module, PyObject *args) {
    PyObject *cls, *method;
    const char *cache_name;
    if (!PyArg_ParseTuple(args, "O!sO", &PyType_Type, &cls, &cache_name, &method)) return NULL;
    if (!PyCallable_Check(method)) {
        PyErr_SetString(PyExc_TypeError, "configure(): the method is not callable");
        return NULL;
    }
    PyTypeObject *tp = (PyTypeObject *)cls;
    if (!(tp->tp_flags & Py_TPFLAGS_HEAPTYPE) || tp->tp_base != &PyBaseObject_Type
        || tp->tp_dictoffset != 0) {
        PyErr_SetString(PyExc_TypeError, "configure() takes a class with __slots__ and no __dict__ that derives from object only");
        return NULL;
    }
    Py_ssize_t found[MAX_SLOTS], cache = -1;
    int n = 0;
    for (PyMemberDef *member = tp->tp_members; member != NULL && member->name != NULL; member++) {
        if (member->type != T_OBJECT_EX || (member->flags & READONLY)) {
            PyErr_Format(PyExc_TypeError, "configure(): %s is not a writable object slot", member->name);
            return NULL;
        }
        if (strcmp(member->name, cache_name) == 0) {
            cache = member->offset;
            continue;
        }
        if (n >= MAX_SLOTS) {
            PyErr_SetString(PyExc_ValueError, "configure(): too many slots");
            return NULL;
        }
        found[n++] = member->offset;
    }
    if (cache < 0) {
        PyErr_Format(PyExc_ValueError, "configure(): no slot named %s", cache_name);
        return NULL;
    }
    memcpy(offsets, found, sizeof(Py_ssize_t) * (size_t)n);
    n_offsets = n;
    cache_offset = cache;
    Py_INCREF(method);
    Py_XSETREF(fallback, method);
    Py_INCREF(cls);
    Py_XSETREF(state_type, tp);
    return PyLong_FromLong(n);
}

static PyMethodDef methods[] = {
    {"copy", copy, METH_O, "copy(state) -> State: what State._copy returns (the cache slot None)."},
    {"configure", configure, METH_VARARGS, "configure(cls, cache_slot_name, method) -> slots copied."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_statecopy", "State._copy, compiled (see _statecopy.c).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__statecopy(void) { return PyModule_Create(&module_def); }
