/* The static embedder's hot loop in C: split texts at white space, look each piece's
 * token ids up in a table of remembered pieces, and sum the pieces' token vectors, with
 * the GIL released (so two threads, or a thread beside the caller's, embed at once).
 *
 * Why C: in Python the split and the dictionary lookups cost 38 us a text and the
 * gather-and-sum 17 us (benchmarks/results/store_speed.md), all of it holding the GIL.
 *
 * Exactly what _static.py's Python path computes, bit for bit:
 * - pieces are what str.split() gives (Py_UNICODE_ISSPACE);
 * - a text holding one of \x0b \x0c \x1c-\x1f \x85 (white space to Python, deleted by
 *   BERT's normaliser), or whose pieces average more than `whole_piece_chars`
 *   characters, is left to the caller to tokenise whole;
 * - the token ids are the pieces' ids in order, cut at `max_tokens`, unknown ids
 *   dropped; the sum starts from the first row and adds the others one after the other
 *   in float32, as numpy's sum(axis=0) over the gathered rows does.
 *
 * Thread safety: `pool` and `get` read under a shared lock, `add` writes under an
 * exclusive one (`Shared`, below). A reader never needs the GIL while it holds the lock,
 * so a writer that waits for it holding the GIL cannot deadlock.
 *
 * Portable: only CPython's own C API (its thread locks, not <pthread.h>), nothing
 * deprecated, and the GCC/Clang extensions behind checks.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pythread.h>
#include <stdint.h>
#include <string.h>

#include "_pieces_table.h"

#if defined(__GNUC__) || defined(__clang__)
#define PREFETCH(address) __builtin_prefetch(address)
#else
#define PREFETCH(address) ((void)(address))
#endif

/* A readers-writer lock from two of CPython's thread locks (which any thread may
 * release, as threading.Lock): the first reader in takes `writing` for all readers and
 * the last one out gives it back; a writer takes it alone. `count` guards `readers`. */
typedef struct {
    PyThread_type_lock count;
    PyThread_type_lock writing;
    Py_ssize_t readers;
} Shared;

static int
shared_init(Shared *lock)
{
    lock->count = PyThread_allocate_lock();
    lock->writing = PyThread_allocate_lock();
    lock->readers = 0;
    if (lock->count == NULL || lock->writing == NULL) {
        if (lock->count != NULL)
            PyThread_free_lock(lock->count);
        if (lock->writing != NULL)
            PyThread_free_lock(lock->writing);
        return -1;
    }
    return 0;
}

static void
shared_free(Shared *lock)
{
    PyThread_free_lock(lock->count);
    PyThread_free_lock(lock->writing);
}

static void
read_lock(Shared *lock)
{
    PyThread_acquire_lock(lock->count, WAIT_LOCK);
    if (++lock->readers == 1)
        PyThread_acquire_lock(lock->writing, WAIT_LOCK);
    PyThread_release_lock(lock->count);
}

static void
read_unlock(Shared *lock)
{
    PyThread_acquire_lock(lock->count, WAIT_LOCK);
    if (--lock->readers == 0)
        PyThread_release_lock(lock->writing);
    PyThread_release_lock(lock->count);
}

static void
write_lock(Shared *lock)
{
    PyThread_acquire_lock(lock->writing, WAIT_LOCK);
}

static void
write_unlock(Shared *lock)
{
    PyThread_release_lock(lock->writing);
}

typedef struct {
    uint64_t hash; /* 0: an empty slot */
    uint32_t key;  /* offset into keys (code points) */
    uint32_t ids;  /* offset into ids */
    uint16_t key_len;
    uint16_t n_ids;
} Slot;

typedef struct {
    PyObject_HEAD
    Py_buffer table; /* float32 (vocab, dim), C-contiguous */
    int has_table;
    Py_ssize_t vocab;
    Py_ssize_t dim;
    long unk; /* -1: none */
    Py_ssize_t max_tokens;
    Slot *slots;
    size_t capacity; /* a power of two */
    size_t count;
    Py_UCS4 *keys;
    size_t keys_len, keys_cap;
    int32_t *ids;
    size_t ids_len, ids_cap;
    Shared lock;
    int has_lock;
} PieceTable;

enum { POOLED = 0, WHOLE = 1, MISSING = 2 };

/* FNV-1a over a piece's code points (_pieces_table.h), fed one at a time: the split hashes as it
 * goes. */
static uint64_t
hash_piece(const Py_UCS4 *key, size_t len)
{
    uint64_t h = HASH_START;
    for (size_t i = 0; i < len; i++)
        h = hash_step(h, key[i]);
    return hash_end(h);
}

static const Slot *
find(const PieceTable *self, const Py_UCS4 *key, size_t len, uint64_t h)
{
    size_t mask = self->capacity - 1;
    for (size_t at = (size_t)h & mask;; at = (at + 1) & mask) {
        const Slot *slot = &self->slots[at];
        if (slot->hash == 0)
            return NULL;
        if (slot->hash == h && slot->key_len == len &&
            memcmp(self->keys + slot->key, key, len * sizeof(Py_UCS4)) == 0)
            return slot;
    }
}


/* Copies a str's code points into `into` (room for its length). */
static void
code_points(PyObject *text, Py_UCS4 *into)
{
    int kind = PyUnicode_KIND(text);
    const void *data = PyUnicode_DATA(text);
    Py_ssize_t len = PyUnicode_GET_LENGTH(text);
    for (Py_ssize_t i = 0; i < len; i++)
        into[i] = PyUnicode_READ(kind, data, i);
}

/* 0 for a str whose code points can be read (PyUnicode_GetLength makes a legacy string
 * of Python 3.11 ready, as the deprecated PyUnicode_READY did), else -1 with an error. */
static int
ready(PyObject *text)
{
    if (!PyUnicode_Check(text)) {
        PyErr_Format(PyExc_TypeError, "expected str, got %.80s", Py_TYPE(text)->tp_name);
        return -1;
    }
    return PyUnicode_GetLength(text) < 0 ? -1 : 0;
}

static int
table_init(PieceTable *self, PyObject *args, PyObject *kwds)
{
    static char *names[] = {"table", "unk", "max_tokens", NULL};
    PyObject *table;
    long unk;
    Py_ssize_t max_tokens;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "Oln", names, &table, &unk, &max_tokens))
        return -1;
    if (self->has_table) {
        PyErr_SetString(PyExc_RuntimeError, "PieceTable is already initialised");
        return -1;
    }
    if (PyObject_GetBuffer(table, &self->table, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
        return -1;
    self->has_table = 1;
    if (self->table.ndim != 2 || self->table.itemsize != 4 || self->table.format == NULL ||
        strcmp(self->table.format, "f") != 0) {
        PyErr_SetString(PyExc_ValueError, "table must be a C-contiguous float32 matrix");
        return -1;
    }
    if (max_tokens < 1) {
        PyErr_SetString(PyExc_ValueError, "max_tokens must be at least 1");
        return -1;
    }
    self->vocab = self->table.shape[0];
    self->dim = self->table.shape[1];
    self->unk = unk;
    self->max_tokens = max_tokens;
    self->capacity = 1 << 12;
    self->slots = calloc(self->capacity, sizeof(Slot));
    if (self->slots == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    if (shared_init(&self->lock) < 0) {
        PyErr_SetString(PyExc_OSError, "could not create the piece table's lock");
        return -1;
    }
    self->has_lock = 1;
    return 0;
}

static void
table_dealloc(PieceTable *self)
{
    if (self->has_table)
        PyBuffer_Release(&self->table);
    if (self->has_lock)
        shared_free(&self->lock);
    free(self->slots);
    free(self->keys);
    free(self->ids);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int
initialised(PieceTable *self)
{
    if (!self->has_lock) {
        PyErr_SetString(PyExc_RuntimeError, "PieceTable was not initialised");
        return 0;
    }
    return 1;
}

/* add(pieces, ids): remembers each piece's token ids (int32 bytes). A piece already
 * remembered keeps its ids. */
static PyObject *
table_add(PieceTable *self, PyObject *args)
{
    PyObject *pieces, *ids;
    if (!initialised(self) || !PyArg_ParseTuple(args, "OO", &pieces, &ids))
        return NULL;
    PyObject *keys = PySequence_Tuple(pieces);
    if (keys == NULL)
        return NULL;
    PyObject *values = PySequence_Tuple(ids);
    if (values == NULL) {
        Py_DECREF(keys);
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(keys);
    PyObject *result = NULL;
    Py_UCS4 *scratch = NULL;
    size_t scratch_cap = 0;
    if (PyTuple_GET_SIZE(values) != n) {
        PyErr_SetString(PyExc_ValueError, "pieces and ids differ in length");
        goto done;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *key = PyTuple_GET_ITEM(keys, i), *value = PyTuple_GET_ITEM(values, i);
        if (ready(key) < 0)
            goto done;
        if (!PyBytes_Check(value) || PyBytes_GET_SIZE(value) % 4 != 0) {
            PyErr_SetString(PyExc_TypeError, "ids must be bytes of int32 token ids");
            goto done;
        }
        Py_ssize_t len = PyUnicode_GET_LENGTH(key);
        if (len == 0 || len > UINT16_MAX || PyBytes_GET_SIZE(value) / 4 > UINT16_MAX) {
            PyErr_SetString(PyExc_ValueError, "a piece must be 1 to 65535 characters");
            goto done;
        }
        const int32_t *tokens = (const int32_t *)PyBytes_AS_STRING(value);
        for (Py_ssize_t t = 0; t < PyBytes_GET_SIZE(value) / 4; t++) {
            if (tokens[t] < 0 || tokens[t] >= self->vocab) {
                PyErr_Format(PyExc_ValueError, "token id %d is outside the table", tokens[t]);
                goto done;
            }
        }
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        Py_ssize_t len = PyUnicode_GET_LENGTH(PyTuple_GET_ITEM(keys, i));
        if (grow((void **)&scratch, &scratch_cap, (size_t)len, sizeof(Py_UCS4)) < 0) {
            PyErr_NoMemory();
            goto done;
        }
    }
    write_lock(&self->lock);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *key = PyTuple_GET_ITEM(keys, i), *value = PyTuple_GET_ITEM(values, i);
        size_t len = (size_t)PyUnicode_GET_LENGTH(key);
        size_t count = (size_t)PyBytes_GET_SIZE(value) / 4;
        code_points(key, scratch);
        uint64_t h = hash_piece(scratch, len);
        if (find(self, scratch, len, h) != NULL)
            continue;
        if ((self->count + 1) * 2 > self->capacity &&
            rehash((void **)&self->slots, &self->capacity, self->capacity * 2, sizeof(Slot)) < 0)
            goto full;
        if (self->keys_len + len > UINT32_MAX || self->ids_len + count > UINT32_MAX ||
            grow((void **)&self->keys, &self->keys_cap, self->keys_len + len,
                 sizeof(Py_UCS4)) < 0 ||
            grow((void **)&self->ids, &self->ids_cap, self->ids_len + count,
                 sizeof(int32_t)) < 0)
            goto full;
        memcpy(self->keys + self->keys_len, scratch, len * sizeof(Py_UCS4));
        memcpy(self->ids + self->ids_len, PyBytes_AS_STRING(value), count * sizeof(int32_t));
        size_t mask = self->capacity - 1, at = (size_t)h & mask;
        while (self->slots[at].hash != 0)
            at = (at + 1) & mask;
        self->slots[at] = (Slot){h, (uint32_t)self->keys_len, (uint32_t)self->ids_len,
                                 (uint16_t)len, (uint16_t)count};
        self->keys_len += len;
        self->ids_len += count;
        self->count++;
    }
    write_unlock(&self->lock);
    result = Py_NewRef(Py_None);
    goto done;
full:
    write_unlock(&self->lock);
    PyErr_NoMemory();
done:
    free(scratch);
    Py_DECREF(keys);
    Py_DECREF(values);
    return result;
}

/* get(piece): its remembered token ids (int32 bytes), or None. */
static PyObject *
table_get(PieceTable *self, PyObject *piece)
{
    if (!initialised(self) || ready(piece) < 0)
        return NULL;
    size_t len = (size_t)PyUnicode_GET_LENGTH(piece);
    Py_UCS4 *key = PyMem_Malloc((len ? len : 1) * sizeof(Py_UCS4));
    if (key == NULL)
        return PyErr_NoMemory();
    code_points(piece, key);
    PyObject *result = NULL;
    read_lock(&self->lock);
    const Slot *slot = find(self, key, len, hash_piece(key, len));
    if (slot != NULL)
        result = PyBytes_FromStringAndSize((const char *)(self->ids + slot->ids),
                                           (Py_ssize_t)slot->n_ids * 4);
    read_unlock(&self->lock);
    PyMem_Free(key);
    if (slot == NULL)
        Py_RETURN_NONE;
    return result;
}

typedef struct {
    Py_ssize_t start, end;
    uint64_t hash;
} Span;

typedef struct {
    Py_ssize_t start, end, row;
} Miss;

typedef struct {
    Span *spans;
    size_t spans_cap;
    const Slot **found;
    size_t found_cap;
    int32_t *rows;
    size_t rows_cap;
    Py_UCS4 *key;
    size_t key_cap;
    Miss *miss; /* the pieces not remembered, of every MISSING text */
    size_t miss_len, miss_cap;
} Scratch;

static int
is_split_differs(Py_UCS4 c)
{
    return c == 0x0b || c == 0x0c || (c >= 0x1c && c <= 0x1f) || c == 0x85;
}

/* How far ahead the rows to add are prefetched: a row is a kilobyte of a table of tens
 * of megabytes, so nearly every one is a cache miss, and waiting for them was most of
 * the time (perf: the add's load). */
#define AHEAD 4

static void
prefetch_row(const float *row, Py_ssize_t dim)
{
    const char *at = (const char *)row;
    for (Py_ssize_t b = 0; b < dim * (Py_ssize_t)sizeof(float); b += 64)
        PREFETCH(at + b);
}

/* AVX2 where the processor has it (chosen at load time), else SSE2: the same adds in
 * the same order, lane by lane, so the same bits. */
#if defined(__x86_64__) && defined(__GNUC__) && defined(__linux__)
__attribute__((target_clones("avx2", "default")))
#endif
static void
add_row(float *restrict out, const float *restrict row, Py_ssize_t dim)
{
    for (Py_ssize_t d = 0; d < dim; d++)
        out[d] += row[d];
}

/* One text: WHOLE, MISSING, or POOLED into `out` (dim floats). -1: out of memory.
 * In stages, so the cache misses of one stage overlap: split and hash every piece
 * (prefetching its slot), find every piece, then add the rows (prefetched ahead). */
static int
pool_one(const PieceTable *self, Scratch *s, int kind, const void *data, Py_ssize_t len,
         Py_ssize_t whole_piece_chars, float *out, Py_ssize_t row)
{
    size_t n = 0;
    Py_ssize_t i = 0;
    size_t mask = self->capacity - 1;
    while (i < len) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        if (is_split_differs(c))
            return WHOLE;
        if (Py_UNICODE_ISSPACE(c)) {
            i++;
            continue;
        }
        Py_ssize_t start = i;
        uint64_t h = HASH_START;
        while (i < len) {
            c = PyUnicode_READ(kind, data, i);
            if (is_split_differs(c))
                return WHOLE;
            if (Py_UNICODE_ISSPACE(c))
                break;
            h = hash_step(h, c);
            i++;
        }
        h = hash_end(h);
        PREFETCH(&self->slots[(size_t)h & mask]);
        if (grow((void **)&s->spans, &s->spans_cap, n + 1, sizeof(Span)) < 0)
            return -1;
        s->spans[n++] = (Span){start, i, h};
    }
    if ((Py_ssize_t)n * whole_piece_chars < len)
        return WHOLE;
    if (grow((void **)&s->found, &s->found_cap, n ? n : 1, sizeof(Slot *)) < 0)
        return -1;
    /* The slot whose hash matches each piece's (its key and ids prefetched), then the
     * keys compared: the compare's misses overlap instead of following each probe. */
    for (size_t p = 0; p < n; p++) {
        uint64_t h = s->spans[p].hash;
        const Slot *slot = NULL;
        for (size_t at = (size_t)h & mask; self->slots[at].hash != 0; at = (at + 1) & mask) {
            if (self->slots[at].hash == h) {
                slot = &self->slots[at];
                PREFETCH(self->keys + slot->key);
                PREFETCH(self->ids + slot->ids);
                break;
            }
        }
        s->found[p] = slot;
    }
    size_t tokens = 0, missed = s->miss_len;
    for (size_t p = 0; p < n; p++) {
        size_t plen = (size_t)(s->spans[p].end - s->spans[p].start);
        const Slot *slot = s->found[p];
        int same = slot != NULL && slot->key_len == plen;
        for (size_t k = 0; same && k < plen; k++)
            same = self->keys[slot->key + k] ==
                   PyUnicode_READ(kind, data, s->spans[p].start + (Py_ssize_t)k);
        if (!same && slot != NULL && plen <= UINT16_MAX) {
            /* Two pieces with one 64-bit hash: look further along the probe. */
            if (grow((void **)&s->key, &s->key_cap, plen, sizeof(Py_UCS4)) < 0)
                return -1;
            for (size_t k = 0; k < plen; k++)
                s->key[k] = PyUnicode_READ(kind, data, s->spans[p].start + (Py_ssize_t)k);
            slot = find(self, s->key, plen, s->spans[p].hash);
            same = slot != NULL;
        }
        if (!same) {
            if (grow((void **)&s->miss, &s->miss_cap, s->miss_len + 1, sizeof(Miss)) < 0)
                return -1;
            s->miss[s->miss_len++] = (Miss){s->spans[p].start, s->spans[p].end, row};
            continue;
        }
        s->found[p] = slot;
        tokens += slot->n_ids;
    }
    if (s->miss_len > missed)
        return MISSING;
    /* The rows to add: cut at max_tokens, unknown tokens dropped. */
    if (grow((void **)&s->rows, &s->rows_cap, tokens ? tokens : 1, sizeof(int32_t)) < 0)
        return -1;
    size_t count = 0;
    Py_ssize_t taken = 0;
    for (size_t p = 0; p < n && taken < self->max_tokens; p++) {
        const int32_t *ids = self->ids + s->found[p]->ids;
        for (uint16_t t = 0; t < s->found[p]->n_ids && taken < self->max_tokens; t++) {
            taken++;
            if (ids[t] != self->unk)
                s->rows[count++] = ids[t];
        }
    }
    const float *table = (const float *)self->table.buf;
    Py_ssize_t dim = self->dim;
    if (count == 0) {
        memset(out, 0, (size_t)dim * sizeof(float));
        return POOLED;
    }
    for (size_t t = 0; t < count && t < AHEAD; t++)
        prefetch_row(table + (Py_ssize_t)s->rows[t] * dim, dim);
    memcpy(out, table + (Py_ssize_t)s->rows[0] * dim, (size_t)dim * sizeof(float));
    for (size_t t = 1; t < count; t++) {
        if (t + AHEAD < count)
            prefetch_row(table + (Py_ssize_t)s->rows[t + AHEAD] * dim, dim);
        add_row(out, table + (Py_ssize_t)s->rows[t] * dim, dim);
    }
    return POOLED;
}

/* pool(texts, out, whole_piece_chars) -> (whole rows, missing rows, missing pieces):
 * sums the token vectors of each text made of remembered pieces into its row of `out`
 * (float32, one row per text); the rows it names are left for the caller, with the
 * distinct pieces of the missing rows that are not remembered. */
static PyObject *
table_pool(PieceTable *self, PyObject *args)
{
    PyObject *texts_arg, *out_arg;
    Py_ssize_t whole_piece_chars;
    if (!initialised(self) ||
        !PyArg_ParseTuple(args, "OOn", &texts_arg, &out_arg, &whole_piece_chars))
        return NULL;
    /* A tuple of our own: the texts stay alive, whatever another thread does to the
     * caller's list while the GIL is released. */
    PyObject *texts = PySequence_Tuple(texts_arg);
    if (texts == NULL)
        return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(texts);
    for (Py_ssize_t r = 0; r < n; r++) {
        if (ready(PyTuple_GET_ITEM(texts, r)) < 0) {
            Py_DECREF(texts);
            return NULL;
        }
    }
    Py_buffer out;
    if (PyObject_GetBuffer(out_arg, &out, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT | PyBUF_WRITABLE) <
        0) {
        Py_DECREF(texts);
        return NULL;
    }
    PyObject *result = NULL;
    unsigned char *status = NULL;
    Scratch s = {0};
    if (out.ndim != 2 || out.itemsize != 4 || out.format == NULL ||
        strcmp(out.format, "f") != 0 || out.shape[0] != n || out.shape[1] != self->dim) {
        PyErr_Format(PyExc_ValueError,
                     "out must be a C-contiguous float32 matrix of shape (%zd, %zd): a row "
                     "per text, a column per dimension",
                     n, self->dim);
        goto done;
    }
    status = PyMem_Malloc(n ? (size_t)n : 1);
    if (status == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    int failed = 0;
    Py_BEGIN_ALLOW_THREADS
    read_lock(&self->lock);
    for (Py_ssize_t r = 0; r < n && !failed; r++) {
        PyObject *text = PyTuple_GET_ITEM(texts, r);
        int got = pool_one(self, &s, PyUnicode_KIND(text), PyUnicode_DATA(text),
                           PyUnicode_GET_LENGTH(text), whole_piece_chars,
                           (float *)out.buf + r * self->dim, r);
        if (got < 0)
            failed = 1;
        else
            status[r] = (unsigned char)got;
    }
    read_unlock(&self->lock);
    Py_END_ALLOW_THREADS
    if (failed) {
        PyErr_NoMemory();
        goto done;
    }
    PyObject *whole = PyList_New(0), *missing = PyList_New(0), *pieces = PySet_New(NULL);
    if (whole == NULL || missing == NULL || pieces == NULL)
        goto lists_failed;
    for (Py_ssize_t r = 0; r < n; r++) {
        if (status[r] == POOLED)
            continue;
        PyObject *row = PyLong_FromSsize_t(r);
        if (row == NULL || PyList_Append(status[r] == WHOLE ? whole : missing, row) < 0) {
            Py_XDECREF(row);
            goto lists_failed;
        }
        Py_DECREF(row);
    }
    for (size_t m = 0; m < s.miss_len; m++) {
        PyObject *text = PyTuple_GET_ITEM(texts, s.miss[m].row);
        PyObject *piece = PyUnicode_Substring(text, s.miss[m].start, s.miss[m].end);
        if (piece == NULL || PySet_Add(pieces, piece) < 0) {
            Py_XDECREF(piece);
            goto lists_failed;
        }
        Py_DECREF(piece);
    }
    result = Py_BuildValue("(NNN)", whole, missing, pieces);
    goto done;
lists_failed:
    Py_XDECREF(whole);
    Py_XDECREF(missing);
    Py_XDECREF(pieces);
done:
    free(s.spans);
    free(s.found);
    free(s.rows);
    free(s.miss);
    free(s.key);
    PyMem_Free(status);
    PyBuffer_Release(&out);
    Py_DECREF(texts);
    return result;
}

static Py_ssize_t
table_len(PieceTable *self)
{
    if (!self->has_lock)
        return 0;
    read_lock(&self->lock);
    Py_ssize_t count = (Py_ssize_t)self->count;
    read_unlock(&self->lock);
    return count;
}

static PyMethodDef table_methods[] = {
    {"add", (PyCFunction)table_add, METH_VARARGS,
     "add(pieces, ids): remember each piece's token ids (int32 bytes)."},
    {"get", (PyCFunction)table_get, METH_O,
     "get(piece): the piece's remembered token ids (int32 bytes), or None."},
    {"pool", (PyCFunction)table_pool, METH_VARARGS,
     "pool(texts, out, whole_piece_chars) -> (whole rows, missing rows, missing pieces)."},
    {NULL, NULL, 0, NULL},
};

static PySequenceMethods table_sequence = {
    .sq_length = (lenfunc)table_len,
};

static PyTypeObject PieceTableType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "sift.integrations.embedders._pieces.PieceTable",
    .tp_basicsize = sizeof(PieceTable),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "PieceTable(table, unk, max_tokens): remembered pieces' token ids, and the "
              "pooling of texts made of them.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)table_init,
    .tp_dealloc = (destructor)table_dealloc,
    .tp_methods = table_methods,
    .tp_as_sequence = &table_sequence,
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "sift.integrations.embedders._pieces",
    .m_doc = "The static embedder's piece table and pooling, in C.",
    .m_size = -1,
};

PyMODINIT_FUNC
PyInit__pieces(void)
{
    if (PyType_Ready(&PieceTableType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    if (PyModule_AddObjectRef(m, "PieceTable", (PyObject *)&PieceTableType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
