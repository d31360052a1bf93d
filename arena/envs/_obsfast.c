/* The observation encoder of arena/envs/observation.py, compiled (an optional accelerator).
 *
 * Contract: encode(state, seat) returns the very float32 vector that the pure-Python
 * observation.encode_python(state, seat) returns (same layout, same values bit for bit; the test
 * tests/envs/test_obsfast.py compares them on every state of many games), as a new writable numpy
 * array.  The Python module stays the definition: it hands this module every constant and table
 * it needs through configure() (the layout's sizes and scales, the lifeguard's blocked loungers,
 * the loungers' values, the State class).  One rule is computed here, R27's score (chips / 2,
 * the value of each secured own lounger, 1 per figure on an unsecured lounger), as the engine's
 * scoring.scores does; the bit-for-bit test holds the two together.
 *
 * Speed comes from three things: the State's __slots__ are read at their offsets (the member
 * descriptors of the exact State class, found once) instead of through attribute lookup; the
 * slow-changing board part (towels, figures, supplies, scores, seats, pool) is kept per seat and
 * reused while the state holds the very same tuples (the rules share unchanged tuples between
 * states); the rest is a few dozen stores into the new buffer.  Anything unexpected (another
 * class, an unset slot, a value of the wrong type) is handed to the Python encoder, which gives
 * the precise error.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>
#include <string.h>

#define SLOTS 4       /* relative seats in the layout (MAX_PLAYERS) */
#define MAX_LOUNGERS 64
#define MAX_TRACK 64
#define MAX_OBS 1024

/* The State slots read here, by name (the order of the offsets table). */
static const char *const FIELD_NAMES[] = {
    "players", "phase", "seat", "round", "throw_no", "dice", "kept", "last", "result",
    "guard", "towel", "secured", "figure", "towels", "figures", "chips", "pool",
    "occupied", "final_round", "rules",
};
enum {
    F_PLAYERS, F_PHASE, F_SEAT, F_ROUND, F_THROW_NO, F_DICE, F_KEPT, F_LAST, F_RESULT,
    F_GUARD, F_TOWEL, F_SECURED, F_FIGURE, F_TOWELS, F_FIGURES, F_CHIPS, F_POOL,
    F_OCCUPIED, F_FINAL_ROUND, F_RULES, N_FIELDS
};

typedef struct {
    PyObject *keys[6];         /* towel, figure, secured, chips, towels, figures (held) */
    int players;
    int valid;
    unsigned long version;     /* counts refills */
    long towel[MAX_LOUNGERS], figure[MAX_LOUNGERS];
    unsigned char secured[MAX_LOUNGERS];
    long towels[SLOTS], figures[SLOTS], chips[SLOTS], pts[SLOTS];
} Board;

typedef struct {
    int configured;
    PyTypeObject *state_type;      /* the exact class whose slots are read (a strong reference) */
    Py_ssize_t offset[N_FIELDS];
    PyObject *fallback;            /* observation.encode_python */
    PyObject *empty;               /* numpy.empty */
    PyObject *dtype;               /* numpy float32 dtype */
    PyObject *size;                /* obs_size as a Python int */
    PyObject *round_cap_name;      /* "round_cap" */
    PyTypeObject *phase_type;      /* the engine's Phase (an IntEnum; a strong reference) */
    int loungers, track, faces, n_dice, max_throws, phases, over_phase, obs_size;
    double towel_scale, figure_scale, chip_scale, score_scale, pool_scale;
    unsigned char blocked[MAX_TRACK + 1][MAX_LOUNGERS]; /* by lifeguard position + 1 */
    long value[MAX_LOUNGERS];      /* R27: what a secured lounger is worth */
    Board board;               /* the board in absolute seats, reused while the state holds
                                  the very same tuples */
    /* The board part of each observing seat's vector, made from board version ``version``. */
    struct {
        int valid;
        unsigned long version;
        float data[MAX_OBS];
    } seen[SLOTS];
    int board_len;                 /* floats of the board part */
    /* round_cap of the last rules object seen */
    PyObject *rules;               /* held */
    long round_cap;
} Config;

static Config cfg;

static inline PyObject *slot(PyObject *obj, int field) {
    return *(PyObject **)((char *)obj + cfg.offset[field]);
}

/* An int as the rules make them: exactly int or bool (no subclass whose arithmetic or __index__
   could differ from the value, or run Python code here). */
static inline int plain_int(PyObject *v) { return PyLong_CheckExact(v) || PyBool_Check(v); }

/* A plain int as a C long; -1 and an exception otherwise (unset, another type, too large). */
static inline long as_long(PyObject *v) {
    if (v == NULL || !plain_int(v)) {
        PyErr_SetString(PyExc_TypeError, "not a plain int");
        return -1;
    }
    return PyLong_AsLong(v);
}

/* A tuple of exactly n ints into out[]; 0 on success. */
static int int_tuple(PyObject *t, Py_ssize_t n, long *out) {
    if (t == NULL || !PyTuple_CheckExact(t) || PyTuple_GET_SIZE(t) != n) {
        PyErr_SetString(PyExc_TypeError, "not a tuple of the expected size");
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        long x = as_long(PyTuple_GET_ITEM(t, i));
        if (x == -1 && PyErr_Occurred()) return -1;
        out[i] = x;
    }
    return 0;
}

/* A tuple of exactly n ints, each in lo..hi-1, into out[]; 0 on success. */
static int ranged_tuple(PyObject *t, Py_ssize_t n, long lo, long hi, long *out) {
    if (int_tuple(t, n, out) < 0) return -1;
    for (Py_ssize_t i = 0; i < n; i++) {
        if (out[i] < lo || out[i] >= hi) {
            PyErr_SetString(PyExc_ValueError, "a value out of range");
            return -1;
        }
    }
    return 0;
}

/* Floor division by 2, as Python's // (chips are never negative in a game; junk may be). */
static inline long half_down(long x) { return x >= 0 ? x / 2 : -((1 - x) / 2); }

/* Reads the board of ``state`` (its six tuples are ``keys``) into cfg.board, scores included.
   Read into a local copy and stored whole: no Python code runs while it is read (plain ints
   only), and the old tuples are released only after the new board is in place. */
static int read_board(PyObject *state, int n, PyObject *const *keys) {
    Board b;
    if (ranged_tuple(keys[0], cfg.loungers, -1, n, b.towel) < 0
        || ranged_tuple(keys[1], cfg.loungers, -1, n, b.figure) < 0
        || int_tuple(keys[3], n, b.chips) < 0 || int_tuple(keys[4], n, b.towels) < 0
        || int_tuple(keys[5], n, b.figures) < 0)
        return -1;
    PyObject *secured = keys[2];
    if (secured == NULL || !PyTuple_CheckExact(secured) || PyTuple_GET_SIZE(secured) != cfg.loungers) {
        PyErr_SetString(PyExc_TypeError, "secured is not a tuple of the expected size");
        return -1;
    }
    for (int i = 0; i < cfg.loungers; i++) {
        PyObject *flag = PyTuple_GET_ITEM(secured, i);
        if (!PyBool_Check(flag)) {  /* the Python encoder writes other values as they are */
            PyErr_SetString(PyExc_TypeError, "secured flags are bools");
            return -1;
        }
        b.secured[i] = flag == Py_True;
    }
    /* R27, as arena.engine.scoring.scores: chips // 2, then per lounger the value of a secured
       one to its towel's owner, else 1 for a figure to the figure's owner. */
    for (int k = 0; k < n; k++) b.pts[k] = half_down(b.chips[k]);
    for (int i = 0; i < cfg.loungers; i++) {
        if (b.secured[i]) {
            if (b.towel[i] < 0) {  /* no rule makes this: the Python encoder answers it */
                PyErr_SetString(PyExc_ValueError, "a secured lounger without a towel");
                return -1;
            }
            b.pts[b.towel[i]] += cfg.value[i];
        } else if (b.figure[i] >= 0) {
            b.pts[b.figure[i]] += 1;
        }
    }
    for (int j = 0; j < 6; j++) {
        Py_XINCREF(keys[j]);  /* held, so that the identities stay these tuples' own */
        b.keys[j] = keys[j];
    }
    PyObject *old[6];
    memcpy(old, cfg.board.keys, sizeof old);
    b.players = n;
    b.valid = 1;
    b.version = cfg.board.version + 1;
    cfg.board = b;  /* whole, before the old tuples are released */
    for (int j = 0; j < 6; j++) Py_XDECREF(old[j]);
    return 0;
}

/* The board part of seat's vector (board, supplies, scores, seats; not the pool). */
static const float *board_part(PyObject *state, int n, int seat) {
    static const int key_fields[6] = {F_TOWEL, F_FIGURE, F_SECURED, F_CHIPS, F_TOWELS, F_FIGURES};
    PyObject *keys[6];
    for (int j = 0; j < 6; j++) keys[j] = slot(state, key_fields[j]);
    int hit = cfg.board.valid && cfg.board.players == n;
    for (int j = 0; hit && j < 6; j++) hit = cfg.board.keys[j] == keys[j];
    if (!hit && read_board(state, n, keys) < 0) return NULL;
    if (cfg.seen[seat].valid && cfg.seen[seat].version == cfg.board.version) return cfg.seen[seat].data;
    float *p = cfg.seen[seat].data;
    memset(p, 0, sizeof(float) * cfg.board_len);
    for (int i = 0; i < cfg.loungers; i++) {
        if (cfg.board.towel[i] >= 0) p[i * SLOTS + (cfg.board.towel[i] - seat + n) % n] = 1.0f;
    }
    p += cfg.loungers * SLOTS;
    for (int i = 0; i < cfg.loungers; i++) p[i] = cfg.board.secured[i] ? 1.0f : 0.0f;
    p += cfg.loungers;
    for (int i = 0; i < cfg.loungers; i++) {
        if (cfg.board.figure[i] >= 0) p[i * SLOTS + (cfg.board.figure[i] - seat + n) % n] = 1.0f;
    }
    p += cfg.loungers * SLOTS;
    for (int k = 0; k < n; k++) {
        int from = (seat + k) % n;
        p[k] = (float)((double)cfg.board.towels[from] * cfg.towel_scale);
        p[SLOTS + k] = (float)((double)cfg.board.figures[from] * cfg.figure_scale);
        p[2 * SLOTS + k] = (float)((double)cfg.board.chips[from] * cfg.chip_scale);
        p[3 * SLOTS + k] = (float)((double)cfg.board.pts[from] * cfg.score_scale);
        p[4 * SLOTS + k] = 1.0f;
    }
    cfg.seen[seat].version = cfg.board.version;
    cfg.seen[seat].valid = 1;
    return cfg.seen[seat].data;
}

static PyObject *call_fallback(PyObject *state, PyObject *seat_obj) {
    return PyObject_CallFunctionObjArgs(cfg.fallback, state, seat_obj, NULL);
}

static int faces(PyObject *t, float *out) {
    long v[MAX_TRACK];
    if (int_tuple(t, cfg.faces, v) < 0) return -1;
    for (int f = 0; f < cfg.faces; f++) out[f] = (float)((double)v[f] / (double)cfg.n_dice);
    return 0;
}

/* The whole vector into out[cfg.obs_size]; -1 with an exception set on anything unexpected. */
static int fill(PyObject *state, int seat, float *out) {
    long n = as_long(slot(state, F_PLAYERS));
    if (n == -1 && PyErr_Occurred()) return -1;
    if (n < 2 || n > SLOTS || seat < 0 || seat >= n) {
        PyErr_SetString(PyExc_ValueError, "seat or players out of range");
        return -1;
    }
    const float *board = board_part(state, (int)n, seat);
    if (board == NULL) return -1;
    memcpy(out, board, sizeof(float) * cfg.board_len);
    float *p = out + cfg.board_len;
    long pool = as_long(slot(state, F_POOL));
    if (pool == -1 && PyErr_Occurred()) return -1;
    *p++ = (float)((double)pool * cfg.pool_scale);

    long guard = as_long(slot(state, F_GUARD));
    if (guard == -1 && PyErr_Occurred()) return -1;
    if (guard < -1 || guard >= cfg.track) {
        PyErr_SetString(PyExc_ValueError, "lifeguard out of range");
        return -1;
    }
    for (int i = 0; i < cfg.loungers; i++) p[i] = cfg.blocked[guard + 1][i] ? 1.0f : 0.0f;
    p += cfg.loungers;
    memset(p, 0, sizeof(float) * (cfg.track + 1));
    p[guard + 1] = 1.0f;
    p += cfg.track + 1;

    long to_act = as_long(slot(state, F_SEAT));
    if (to_act == -1 && PyErr_Occurred()) return -1;
    PyObject *phase_obj = slot(state, F_PHASE);
    if (phase_obj == NULL || !(plain_int(phase_obj) || Py_TYPE(phase_obj) == cfg.phase_type)) {
        PyErr_SetString(PyExc_TypeError, "phase is not a Phase");
        return -1;
    }
    long phase = PyLong_AsLong(phase_obj);
    if (phase == -1 && PyErr_Occurred()) return -1;
    if (to_act < 0 || to_act >= n || phase < 0 || phase >= cfg.phases) {
        PyErr_SetString(PyExc_ValueError, "seat or phase out of range");
        return -1;
    }
    memset(p, 0, sizeof(float) * (SLOTS + cfg.phases));
    if (phase != cfg.over_phase) p[(to_act - seat + n) % n] = 1.0f;
    p += SLOTS;
    p[phase] = 1.0f;
    p += cfg.phases;

    if (faces(slot(state, F_KEPT), p) < 0) return -1;
    p += cfg.faces;
    if (faces(slot(state, F_LAST), p) < 0) return -1;
    p += cfg.faces;
    if (faces(slot(state, F_RESULT), p) < 0) return -1;
    p += cfg.faces;

    long dice = as_long(slot(state, F_DICE));
    if (dice == -1 && PyErr_Occurred()) return -1;
    long throw_no = as_long(slot(state, F_THROW_NO));
    if (throw_no == -1 && PyErr_Occurred()) return -1;
    if (dice < 0 || dice > cfg.n_dice || throw_no < 0) {
        PyErr_SetString(PyExc_ValueError, "dice or throw_no out of range");
        return -1;
    }
    p[0] = (float)((double)dice / (double)cfg.n_dice);
    p[1] = (float)((double)(throw_no < cfg.max_throws ? throw_no : cfg.max_throws) / (double)cfg.max_throws);
    p += 2;

    PyObject *rules = slot(state, F_RULES);
    if (rules == NULL) {
        PyErr_SetString(PyExc_TypeError, "unset rules");
        return -1;
    }
    long round_cap = cfg.round_cap;
    if (rules != cfg.rules) {
        PyObject *cap = PyObject_GetAttr(rules, cfg.round_cap_name);
        if (cap == NULL) return -1;
        round_cap = as_long(cap);
        Py_DECREF(cap);
        if (round_cap == -1 && PyErr_Occurred()) return -1;
        if (round_cap <= 0) {
            PyErr_SetString(PyExc_ValueError, "round cap out of range");
            return -1;
        }
        /* The pair is replaced whole before the old rules are released (a release may run code). */
        PyObject *old = cfg.rules;
        Py_INCREF(rules);
        cfg.rules = rules;
        cfg.round_cap = round_cap;
        Py_XDECREF(old);
    }
    long rnd = as_long(slot(state, F_ROUND));
    if (rnd == -1 && PyErr_Occurred()) return -1;
    if (rnd < 0 || rnd > round_cap) {
        PyErr_SetString(PyExc_ValueError, "round out of range");
        return -1;
    }
    p[0] = (float)((double)rnd / (double)round_cap);
    PyObject *final_round = slot(state, F_FINAL_ROUND);
    if (final_round == NULL) {
        PyErr_SetString(PyExc_TypeError, "unset final_round");
        return -1;
    }
    if (!plain_int(final_round)) {
        PyErr_SetString(PyExc_TypeError, "final_round is not a bool");
        return -1;
    }
    p[1] = PyObject_IsTrue(final_round) ? 1.0f : 0.0f;
    long occupied = as_long(slot(state, F_OCCUPIED));
    if (occupied == -1 && PyErr_Occurred()) return -1;
    if (occupied < 0 || occupied > cfg.loungers) {
        PyErr_SetString(PyExc_ValueError, "occupied out of range");
        return -1;
    }
    p[2] = (float)((double)(cfg.loungers - occupied) / (double)cfg.loungers);
    return 0;  /* p + 3 - out == obs_size: configure checked the layout against LAYOUT */
}

static PyObject *encode(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "encode(state, seat) takes two arguments");
        return NULL;
    }
    if (!cfg.configured) {
        PyErr_SetString(PyExc_RuntimeError, "_obsfast.configure() was not called");
        return NULL;
    }
    PyObject *state = args[0], *seat_obj = args[1];
    if (Py_TYPE(state) != cfg.state_type || !PyLong_CheckExact(seat_obj)) {
        return call_fallback(state, seat_obj);
    }
    int overflow = 0;
    long seat = PyLong_AsLongAndOverflow(seat_obj, &overflow);
    if (overflow || seat < 0 || seat >= SLOTS) return call_fallback(state, seat_obj);
    PyObject *call_args[2] = {cfg.size, cfg.dtype};
    PyObject *arr = PyObject_Vectorcall(cfg.empty, call_args, 2, NULL);
    if (arr == NULL) return NULL;
    Py_buffer view;
    if (PyObject_GetBuffer(arr, &view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0) {
        Py_DECREF(arr);
        return NULL;
    }
    int bad = view.len != (Py_ssize_t)sizeof(float) * cfg.obs_size || fill(state, (int)seat, (float *)view.buf) < 0;
    PyBuffer_Release(&view);
    if (bad) {
        Py_DECREF(arr);
        PyErr_Clear();
        return call_fallback(state, seat_obj);  /* says precisely what is wrong (or encodes it) */
    }
    return arr;
}

static int int_item(PyObject *dict, const char *key, int *out) {
    PyObject *v = PyDict_GetItemString(dict, key);
    if (v == NULL) {
        PyErr_Format(PyExc_KeyError, "configure: missing %s", key);
        return -1;
    }
    long x = PyLong_AsLong(v);
    if (x == -1 && PyErr_Occurred()) return -1;
    *out = (int)x;
    return 0;
}

static int float_item(PyObject *dict, const char *key, double *out) {
    PyObject *v = PyDict_GetItemString(dict, key);
    if (v == NULL) {
        PyErr_Format(PyExc_KeyError, "configure: missing %s", key);
        return -1;
    }
    *out = PyFloat_AsDouble(v);
    return (*out == -1.0 && PyErr_Occurred()) ? -1 : 0;
}

static PyObject *obj_item(PyObject *dict, const char *key) {
    PyObject *v = PyDict_GetItemString(dict, key);
    if (v == NULL) PyErr_Format(PyExc_KeyError, "configure: missing %s", key);
    return v;
}

/* configure(settings: dict) -> None: the tables and callables the encoder uses (see observation.py). */
static PyObject *configure(PyObject *module, PyObject *settings) {
    if (!PyDict_Check(settings)) {
        PyErr_SetString(PyExc_TypeError, "configure() takes a dict");
        return NULL;
    }
    Config c;
    memset(&c, 0, sizeof c);
    if (int_item(settings, "loungers", &c.loungers) < 0 || int_item(settings, "track", &c.track) < 0
        || int_item(settings, "faces", &c.faces) < 0 || int_item(settings, "n_dice", &c.n_dice) < 0
        || int_item(settings, "max_throws", &c.max_throws) < 0
        || int_item(settings, "phases", &c.phases) < 0
        || int_item(settings, "over_phase", &c.over_phase) < 0
        || int_item(settings, "obs_size", &c.obs_size) < 0
        || float_item(settings, "towel_scale", &c.towel_scale) < 0
        || float_item(settings, "figure_scale", &c.figure_scale) < 0
        || float_item(settings, "chip_scale", &c.chip_scale) < 0
        || float_item(settings, "score_scale", &c.score_scale) < 0
        || float_item(settings, "pool_scale", &c.pool_scale) < 0)
        return NULL;
    if (c.loungers <= 0 || c.loungers > MAX_LOUNGERS || c.track <= 0 || c.track > MAX_TRACK
        || c.faces <= 0 || c.faces > MAX_TRACK || c.n_dice <= 0 || c.max_throws <= 0
        || c.phases <= 0 || c.over_phase < 0 || c.over_phase >= c.phases || c.obs_size <= 0
        || c.obs_size > MAX_OBS) {
        PyErr_SetString(PyExc_ValueError, "configure: a size out of this encoder's range");
        return NULL;
    }
    /* The layout this file writes, piece by piece: it must be observation.LAYOUT exactly (a build
       older than the Python module is refused here, never run past its buffer). */
    const struct { const char *name; int size; } pieces[] = {
        {"towel", c.loungers * SLOTS}, {"secured", c.loungers}, {"figure", c.loungers * SLOTS},
        {"towels", SLOTS}, {"figures", SLOTS}, {"chips", SLOTS}, {"scores", SLOTS}, {"seats", SLOTS},
        {"pool", 1}, {"blocked", c.loungers}, {"lifeguard", c.track + 1}, {"to_act", SLOTS},
        {"phase", c.phases}, {"kept", c.faces}, {"throw", c.faces}, {"result", c.faces},
        {"dice", 1}, {"throw_no", 1}, {"round", 1}, {"final_round", 1}, {"unoccupied", 1},
    };
    const int n_pieces = (int)(sizeof pieces / sizeof pieces[0]);
    PyObject *layout = obj_item(settings, "layout");
    if (layout == NULL) return NULL;
    if (!PyTuple_Check(layout) || PyTuple_GET_SIZE(layout) != n_pieces) {
        PyErr_SetString(PyExc_ValueError, "configure: the layout differs from the one this encoder writes");
        return NULL;
    }
    int total = 0;
    for (int k = 0; k < n_pieces; k++) {
        PyObject *piece = PyTuple_GET_ITEM(layout, k);
        const char *name = NULL;
        int size = -1;
        if (!PyArg_ParseTuple(piece, "si", &name, &size)) return NULL;
        if (strcmp(name, pieces[k].name) != 0 || size != pieces[k].size) {
            PyErr_Format(PyExc_ValueError, "configure: layout piece %d is %s (%d), this encoder writes %s (%d)",
                         k, name, size, pieces[k].name, pieces[k].size);
            return NULL;
        }
        total += size;
        if (strcmp(name, "seats") == 0) c.board_len = total;  /* the cached part ends here */
    }
    if (total != c.obs_size) {
        PyErr_SetString(PyExc_ValueError, "configure: the layout's size is not obs_size");
        return NULL;
    }

    PyObject *blocked = obj_item(settings, "blocked");
    if (blocked == NULL) return NULL;
    if (!PyTuple_Check(blocked) || PyTuple_GET_SIZE(blocked) != c.track + 1) {
        PyErr_SetString(PyExc_ValueError, "configure: blocked needs one entry per lifeguard position");
        return NULL;
    }
    for (int k = 0; k <= c.track; k++) {
        PyObject *ids = PySequence_Fast(PyTuple_GET_ITEM(blocked, k), "blocked entries are sequences");
        if (ids == NULL) return NULL;
        for (Py_ssize_t j = 0; j < PySequence_Fast_GET_SIZE(ids); j++) {
            long id = PyLong_AsLong(PySequence_Fast_GET_ITEM(ids, j));
            if (id < 0 || id >= c.loungers) {
                Py_DECREF(ids);
                if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "configure: blocked lounger out of range");
                return NULL;
            }
            c.blocked[k][id] = 1;
        }
        Py_DECREF(ids);
    }

    PyObject *values = obj_item(settings, "values");
    if (values == NULL) return NULL;
    if (!PyTuple_Check(values) || PyTuple_GET_SIZE(values) != c.loungers) {
        PyErr_SetString(PyExc_ValueError, "configure: values needs one entry per lounger");
        return NULL;
    }
    for (int i = 0; i < c.loungers; i++) {
        c.value[i] = PyLong_AsLong(PyTuple_GET_ITEM(values, i));
        if (c.value[i] == -1 && PyErr_Occurred()) return NULL;
    }
    PyObject *state_type = obj_item(settings, "state_type");
    if (state_type == NULL) return NULL;
    if (!PyType_Check(state_type)) {
        PyErr_SetString(PyExc_TypeError, "configure: state_type is not a class");
        return NULL;
    }
    for (int f = 0; f < N_FIELDS; f++) {
        PyObject *descr = PyDict_GetItemString(((PyTypeObject *)state_type)->tp_dict, FIELD_NAMES[f]);
        if (descr == NULL || Py_TYPE(descr) != &PyMemberDescr_Type) {
            PyErr_Format(PyExc_TypeError, "configure: State.%s is not a slot", FIELD_NAMES[f]);
            return NULL;
        }
        PyMemberDef *member = ((PyMemberDescrObject *)descr)->d_member;
        if (member->type != T_OBJECT_EX) {
            PyErr_Format(PyExc_TypeError, "configure: State.%s is not an object slot", FIELD_NAMES[f]);
            return NULL;
        }
        c.offset[f] = member->offset;
    }
    PyObject *fallback = obj_item(settings, "fallback");
    PyObject *empty = obj_item(settings, "empty"), *dtype = obj_item(settings, "dtype");
    if (fallback == NULL || empty == NULL || dtype == NULL) return NULL;
    PyObject *size = PyLong_FromLong(c.obs_size);
    if (size == NULL) return NULL;
    PyObject *phase_type = obj_item(settings, "phase_type");
    if (phase_type == NULL) return NULL;
    if (!PyType_Check(phase_type)) {
        PyErr_SetString(PyExc_TypeError, "configure: phase_type is not a class");
        return NULL;
    }
    PyObject *name = PyUnicode_InternFromString("round_cap");
    if (name == NULL) {
        Py_DECREF(size);
        return NULL;
    }

    Py_INCREF(state_type);
    Py_INCREF(phase_type);
    Py_INCREF(fallback);
    Py_INCREF(empty);
    Py_INCREF(dtype);
    c.state_type = (PyTypeObject *)state_type;
    c.phase_type = (PyTypeObject *)phase_type;
    c.fallback = fallback;
    c.empty = empty;
    c.dtype = dtype;
    c.size = size;
    c.round_cap_name = name;
    c.configured = 1;
    /* Take the new configuration whole, then release what the previous one held. */
    Config old = cfg;
    cfg = c;
    if (old.configured) {
        for (int j = 0; j < 6; j++) Py_XDECREF(old.board.keys[j]);
        Py_XDECREF(old.rules);
        Py_XDECREF((PyObject *)old.state_type);
        Py_XDECREF((PyObject *)old.phase_type);
        Py_XDECREF(old.fallback);
        Py_XDECREF(old.empty);
        Py_XDECREF(old.dtype);
        Py_XDECREF(old.size);
        Py_XDECREF(old.round_cap_name);
    }
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"encode", (PyCFunction)(void (*)(void))encode, METH_FASTCALL,
     "encode(state, seat) -> numpy float32 array: observation.encode_python's vector, compiled."},
    {"configure", configure, METH_O, "configure(settings: dict) -> None: tables from observation.py."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "_obsfast",
    "The compiled observation encoder (see arena/envs/_obsfast.c and observation.py).", -1, methods,
};

PyMODINIT_FUNC PyInit__obsfast(void) { return PyModule_Create(&module_def); }
