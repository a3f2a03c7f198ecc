/* The BM25 index's terms for ASCII text, in C: split, lower-case, drop long words, and
 * look each word's stem up in a table of remembered stems, with the GIL released.
 *
 * Why: tantivy's own analyzer stems every word of every chunk again (its Snowball
 * stemmer allocates per word), about half of tantivy's indexing CPU: its thread went
 * from 49-75 to 19-35 us a passage without it (benchmarks/results/ingest_ab.md, with
 * 20-59 us on the lexical thread that does this). A corpus has a few hundred thousand
 * distinct words at most, so each is stemmed once (by the analyzer, in Python) and
 * remembered; tantivy is then handed the terms joined by spaces, under a whitespace
 * tokenizer.
 *
 * Exactly `sift.analysis.Analyzer.terms` on ASCII text: the words are the runs of
 * [A-Za-z0-9] (the analyzer's [a-z0-9]+ over the lower-cased text), lower-cased, those
 * longer than `max_word_chars` dropped, each replaced by its remembered stem. A text
 * holding a word not remembered comes back as None, with the word among the missing
 * ones; the caller stems those and adds them. A text past ASCII (normalised by the
 * caller as the analyzer normalises) is cut at white space: its ASCII pieces are done
 * the same way, and the pieces holding a character past ASCII are handed back for the
 * caller to analyse (no term crosses white space).
 *
 * The hash and the table's growth are shared with _pieces.c (integrations/_native/table.h).
 *
 * Thread safety: `join` reads under a shared lock, `add` writes under an exclusive one;
 * a reader never needs the GIL while it holds the lock, so a writer that waits for it
 * holding the GIL cannot deadlock.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "_native/table.h"

typedef struct {
    uint64_t hash; /* 0: an empty slot */
    uint32_t at;   /* offset into bytes: the word, then its stem (UTF-8) */
    uint16_t word_len;
    uint16_t stem_len;
} Slot;

typedef struct {
    PyObject_HEAD
    Py_ssize_t max_word_chars;
    size_t max_entries;
    Slot *slots;
    size_t capacity; /* a power of two */
    size_t count;
    char *bytes;
    size_t bytes_len, bytes_cap;
    pthread_rwlock_t lock;
    int has_lock;
} StemTable;

static inline int
is_word(Py_UCS4 c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

static inline unsigned char
lower(Py_UCS4 c) /* c is ASCII */
{
    return (unsigned char)((c >= 'A' && c <= 'Z') ? c + 32 : c);
}

static const Slot *
find(const StemTable *self, const char *word, size_t len, uint64_t h)
{
    size_t mask = self->capacity - 1;
    for (size_t at = (size_t)h & mask;; at = (at + 1) & mask) {
        const Slot *slot = &self->slots[at];
        if (slot->hash == 0)
            return NULL;
        if (slot->hash == h && slot->word_len == len &&
            memcmp(self->bytes + slot->at, word, len) == 0)
            return slot;
    }
}


static int
stems_init(StemTable *self, PyObject *args, PyObject *kwds)
{
    static char *names[] = {"max_word_chars", "max_entries", NULL};
    Py_ssize_t max_word_chars, max_entries;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "nn", names, &max_word_chars, &max_entries))
        return -1;
    if (self->has_lock) {
        PyErr_SetString(PyExc_RuntimeError, "StemTable is already initialised");
        return -1;
    }
    if (max_word_chars < 1 || max_entries < 0) {
        PyErr_SetString(PyExc_ValueError,
                        "max_word_chars must be at least 1 and max_entries not negative");
        return -1;
    }
    self->max_word_chars = max_word_chars;
    self->max_entries = (size_t)max_entries;
    self->capacity = 1 << 12;
    self->slots = calloc(self->capacity, sizeof(Slot));
    if (self->slots == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    if (pthread_rwlock_init(&self->lock, NULL) != 0) {
        PyErr_SetString(PyExc_OSError, "could not create the stem table's lock");
        return -1;
    }
    self->has_lock = 1;
    return 0;
}

static void
stems_dealloc(StemTable *self)
{
    if (self->has_lock)
        pthread_rwlock_destroy(&self->lock);
    free(self->slots);
    free(self->bytes);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int
initialised(StemTable *self)
{
    if (!self->has_lock) {
        PyErr_SetString(PyExc_RuntimeError, "StemTable was not initialised");
        return 0;
    }
    return 1;
}

/* The word's bytes when it is a word this table may hold: ASCII letters and digits
 * only, lower case, 1 to max_word_chars long. NULL with an exception otherwise. */
static const char *
word_bytes(const StemTable *self, PyObject *word, Py_ssize_t *len)
{
    if (!PyUnicode_Check(word)) {
        PyErr_Format(PyExc_TypeError, "expected str, got %.80s", Py_TYPE(word)->tp_name);
        return NULL;
    }
    const char *data = PyUnicode_AsUTF8AndSize(word, len);
    if (data == NULL)
        return NULL;
    int ok = *len >= 1 && *len <= self->max_word_chars && *len <= UINT16_MAX;
    for (Py_ssize_t i = 0; ok && i < *len; i++)
        ok = is_word((unsigned char)data[i]) && lower((unsigned char)data[i]) == (unsigned char)data[i];
    if (!ok) {
        PyErr_Format(PyExc_ValueError,
                     "%R is not a word the table holds (1 to %zd of a-z and 0-9)", word,
                     self->max_word_chars);
        return NULL;
    }
    return data;
}

/* add(words, stems) -> int: remembers each word's stem, and says how many were new.
 * A word already remembered keeps its stem; an empty stem is not remembered (the text
 * then goes to the caller's exact path), nor is anything once max_entries are held. */
static PyObject *
stems_add(StemTable *self, PyObject *args)
{
    PyObject *words_arg, *stems_arg;
    if (!initialised(self) || !PyArg_ParseTuple(args, "OO", &words_arg, &stems_arg))
        return NULL;
    PyObject *words = PySequence_Tuple(words_arg);
    if (words == NULL)
        return NULL;
    PyObject *stems = PySequence_Tuple(stems_arg);
    if (stems == NULL) {
        Py_DECREF(words);
        return NULL;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(words);
    PyObject *result = NULL;
    const char **word_at = NULL, **stem_at = NULL;
    Py_ssize_t *lens = NULL;
    if (PyTuple_GET_SIZE(stems) != n) {
        PyErr_SetString(PyExc_ValueError, "words and stems differ in length");
        goto done;
    }
    word_at = PyMem_Malloc((n ? (size_t)n : 1) * sizeof(char *));
    stem_at = PyMem_Malloc((n ? (size_t)n : 1) * sizeof(char *));
    lens = PyMem_Malloc((n ? (size_t)n : 1) * 2 * sizeof(Py_ssize_t));
    if (word_at == NULL || stem_at == NULL || lens == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    /* Every argument checked (and its UTF-8 made, which needs the GIL) before the table
     * is touched: a bad one changes nothing. */
    for (Py_ssize_t i = 0; i < n; i++) {
        word_at[i] = word_bytes(self, PyTuple_GET_ITEM(words, i), &lens[2 * i]);
        if (word_at[i] == NULL)
            goto done;
        PyObject *stem = PyTuple_GET_ITEM(stems, i);
        if (!PyUnicode_Check(stem)) {
            PyErr_Format(PyExc_TypeError, "a stem must be str, got %.80s",
                         Py_TYPE(stem)->tp_name);
            goto done;
        }
        stem_at[i] = PyUnicode_AsUTF8AndSize(stem, &lens[2 * i + 1]);
        if (stem_at[i] == NULL)
            goto done;
        if (lens[2 * i + 1] > UINT16_MAX) {
            PyErr_SetString(PyExc_ValueError, "a stem must be at most 65535 bytes");
            goto done;
        }
    }
    Py_ssize_t added = 0;
    int full = 0;
    pthread_rwlock_wrlock(&self->lock);
    for (Py_ssize_t i = 0; i < n && !full; i++) {
        size_t wlen = (size_t)lens[2 * i], slen = (size_t)lens[2 * i + 1];
        uint64_t h = HASH_START;
        for (size_t k = 0; k < wlen; k++)
            h = hash_step(h, (unsigned char)word_at[i][k]);
        h = hash_end(h);
        if (slen == 0 || find(self, word_at[i], wlen, h) != NULL)
            continue;
        if (self->count >= self->max_entries || self->bytes_len + wlen + slen > UINT32_MAX)
            break;
        if (((self->count + 1) * 2 > self->capacity &&
             rehash((void **)&self->slots, &self->capacity, self->capacity * 2, sizeof(Slot)) <
                 0) ||
            grow((void **)&self->bytes, &self->bytes_cap, self->bytes_len + wlen + slen, 1) < 0) {
            full = 1;
            break;
        }
        memcpy(self->bytes + self->bytes_len, word_at[i], wlen);
        memcpy(self->bytes + self->bytes_len + wlen, stem_at[i], slen);
        size_t mask = self->capacity - 1, at = (size_t)h & mask;
        while (self->slots[at].hash != 0)
            at = (at + 1) & mask;
        self->slots[at] = (Slot){h, (uint32_t)self->bytes_len, (uint16_t)wlen, (uint16_t)slen};
        self->bytes_len += wlen + slen;
        self->count++;
        added++;
    }
    pthread_rwlock_unlock(&self->lock);
    if (full)
        PyErr_NoMemory();
    else
        result = PyLong_FromSsize_t(added);
done:
    PyMem_Free(word_at);
    PyMem_Free(stem_at);
    PyMem_Free(lens);
    Py_DECREF(words);
    Py_DECREF(stems);
    return result;
}

typedef struct {
    Py_ssize_t row, start, end;
} Span;

typedef struct {
    char *out; /* every found text's terms, one after the other */
    size_t out_len, out_cap;
    char *word; /* the word being looked up, lower-cased */
    size_t word_cap;
    Span *miss; /* words not remembered */
    size_t miss_len, miss_cap;
    Span *other; /* pieces holding a character past ASCII */
    size_t other_len, other_cap;
} Scratch;

static inline Py_UCS4
at(int kind, const void *data, Py_ssize_t i)
{
    return PyUnicode_READ(kind, data, i);
}

/* One text's terms appended to s->out, joined by spaces: 1; 0 when a word is not
 * remembered (recorded in s->miss); -1: out of memory. In a text past ASCII, the pieces
 * between white space that hold a character past ASCII are left out and recorded in
 * s->other (no word crosses white space); an ASCII text is one piece. */
static int
join_one(const StemTable *self, Scratch *s, int kind, const void *data, Py_ssize_t len,
         int ascii, Py_ssize_t row)
{
    size_t first = s->out_len;
    size_t missed = s->miss_len;
    Py_ssize_t i = 0;
    while (i < len) {
        Py_ssize_t piece_end = len;
        if (!ascii) {
            Py_UCS4 c = at(kind, data, i);
            if (Py_UNICODE_ISSPACE(c)) {
                i++;
                continue;
            }
            int past = 0;
            for (piece_end = i; piece_end < len; piece_end++) {
                c = at(kind, data, piece_end);
                if (Py_UNICODE_ISSPACE(c))
                    break;
                past |= c > 127;
            }
            if (past) {
                if (grow((void **)&s->other, &s->other_cap, s->other_len + 1, sizeof(Span)) < 0)
                    return -1;
                s->other[s->other_len++] = (Span){row, i, piece_end};
                i = piece_end;
                continue;
            }
        }
        while (i < piece_end) {
            if (!is_word(at(kind, data, i))) {
                i++;
                continue;
            }
            Py_ssize_t start = i;
            while (i < piece_end && is_word(at(kind, data, i)))
                i++;
            size_t wlen = (size_t)(i - start);
            if ((Py_ssize_t)wlen > self->max_word_chars)
                continue; /* the analyzer drops it */
            if (grow((void **)&s->word, &s->word_cap, wlen, 1) < 0)
                return -1;
            uint64_t h = HASH_START;
            for (size_t k = 0; k < wlen; k++) {
                s->word[k] = (char)lower(at(kind, data, start + (Py_ssize_t)k));
                h = hash_step(h, (unsigned char)s->word[k]);
            }
            const Slot *slot = wlen <= UINT16_MAX ? find(self, s->word, wlen, hash_end(h)) : NULL;
            if (slot == NULL) {
                if (grow((void **)&s->miss, &s->miss_cap, s->miss_len + 1, sizeof(Span)) < 0)
                    return -1;
                s->miss[s->miss_len++] = (Span){row, start, i};
                continue;
            }
            if (s->miss_len > missed)
                continue; /* this text comes back as None: only its misses matter now */
            if (grow((void **)&s->out, &s->out_cap, s->out_len + slot->stem_len + 1, 1) < 0)
                return -1;
            if (s->out_len > first)
                s->out[s->out_len++] = ' ';
            memcpy(s->out + s->out_len, self->bytes + slot->at + slot->word_len, slot->stem_len);
            s->out_len += slot->stem_len;
        }
    }
    if (s->miss_len > missed) {
        s->out_len = first;
        return 0;
    }
    return 1;
}

/* join(texts) -> (joined, others, missing): for each text, the terms of its ASCII
 * words joined by single spaces, or None when one of them is not remembered; for each
 * text, its pieces (between white space) holding a character past ASCII, joined by
 * single spaces ("" for none), which `joined` leaves out; and the distinct words not
 * remembered (lower-cased), as a set. A text past ASCII must come normalised as the
 * analyzer normalises (NFKC, lower case). */
static PyObject *
stems_join(StemTable *self, PyObject *texts_arg)
{
    if (!initialised(self))
        return NULL;
    /* A tuple of our own: the texts stay alive, whatever another thread does to the
     * caller's list while the GIL is released. */
    PyObject *texts = PySequence_Tuple(texts_arg);
    if (texts == NULL)
        return NULL;
    Py_ssize_t n = PyTuple_GET_SIZE(texts);
    for (Py_ssize_t r = 0; r < n; r++) {
        PyObject *text = PyTuple_GET_ITEM(texts, r);
        if (!PyUnicode_Check(text)) {
            PyErr_Format(PyExc_TypeError, "text %zd is %.80s, not str", r,
                         Py_TYPE(text)->tp_name);
            Py_DECREF(texts);
            return NULL;
        }
#if PY_VERSION_HEX < 0x030C0000
        if (PyUnicode_READY(text) < 0) {
            Py_DECREF(texts);
            return NULL;
        }
#endif
    }
    PyObject *result = NULL, *joined = NULL, *others = NULL, *missing = NULL;
    Scratch s = {0};
    size_t *ends = PyMem_Malloc((n ? (size_t)n : 1) * sizeof(size_t));
    signed char *found = PyMem_Malloc(n ? (size_t)n : 1);
    if (ends == NULL || found == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    int failed = 0;
    Py_BEGIN_ALLOW_THREADS
    pthread_rwlock_rdlock(&self->lock);
    for (Py_ssize_t r = 0; r < n && !failed; r++) {
        PyObject *text = PyTuple_GET_ITEM(texts, r);
        int got = join_one(self, &s, PyUnicode_KIND(text), PyUnicode_DATA(text),
                           PyUnicode_GET_LENGTH(text), PyUnicode_IS_ASCII(text), r);
        failed = got < 0;
        found[r] = (signed char)got;
        ends[r] = s.out_len;
    }
    pthread_rwlock_unlock(&self->lock);
    Py_END_ALLOW_THREADS
    if (failed) {
        PyErr_NoMemory();
        goto done;
    }
    joined = PyList_New(n);
    others = PyList_New(n);
    missing = PySet_New(NULL);
    if (joined == NULL || others == NULL || missing == NULL)
        goto done;
    for (Py_ssize_t r = 0; r < n; r++) {
        PyObject *item;
        if (found[r] == 1) {
            size_t start = r ? ends[r - 1] : 0;
            /* s.out is still NULL when no text had a term. */
            item = PyUnicode_DecodeUTF8(s.out ? s.out + start : "",
                                        (Py_ssize_t)(ends[r] - start), "strict");
            if (item == NULL)
                goto done;
        }
        else {
            item = Py_NewRef(Py_None);
        }
        PyList_SET_ITEM(joined, r, item);
    }
    /* The other pieces, in order, grouped by text (recorded in text order). */
    size_t o = 0;
    for (Py_ssize_t r = 0; r < n; r++) {
        PyObject *parts = PyList_New(0);
        if (parts == NULL)
            goto done;
        for (; o < s.other_len && s.other[o].row == r; o++) {
            PyObject *piece =
                PyUnicode_Substring(PyTuple_GET_ITEM(texts, r), s.other[o].start, s.other[o].end);
            if (piece == NULL || PyList_Append(parts, piece) < 0) {
                Py_XDECREF(piece);
                Py_DECREF(parts);
                goto done;
            }
            Py_DECREF(piece);
        }
        PyObject *space = PyUnicode_FromStringAndSize(" ", 1);
        PyObject *item = space == NULL ? NULL : PyUnicode_Join(space, parts);
        Py_XDECREF(space);
        Py_DECREF(parts);
        if (item == NULL)
            goto done;
        PyList_SET_ITEM(others, r, item);
    }
    for (size_t m = 0; m < s.miss_len; m++) {
        PyObject *text = PyTuple_GET_ITEM(texts, s.miss[m].row);
        int kind = PyUnicode_KIND(text);
        const void *data = PyUnicode_DATA(text);
        Py_ssize_t wlen = s.miss[m].end - s.miss[m].start;
        PyObject *word = PyUnicode_New(wlen, 127);
        if (word == NULL)
            goto done;
        Py_UCS1 *into = PyUnicode_1BYTE_DATA(word);
        for (Py_ssize_t k = 0; k < wlen; k++)
            into[k] = lower(at(kind, data, s.miss[m].start + k));
        int bad = PySet_Add(missing, word) < 0;
        Py_DECREF(word);
        if (bad)
            goto done;
    }
    result = Py_BuildValue("(OOO)", joined, others, missing);
done:
    Py_XDECREF(joined);
    Py_XDECREF(others);
    Py_XDECREF(missing);
    free(s.out);
    free(s.word);
    free(s.miss);
    free(s.other);
    PyMem_Free(ends);
    PyMem_Free(found);
    Py_DECREF(texts);
    return result;
}

/* get(word) -> the remembered stem, or None. */
static PyObject *
stems_get(StemTable *self, PyObject *word)
{
    if (!initialised(self))
        return NULL;
    Py_ssize_t len;
    const char *data = word_bytes(self, word, &len);
    if (data == NULL)
        return NULL;
    uint64_t h = HASH_START;
    for (Py_ssize_t k = 0; k < len; k++)
        h = hash_step(h, (unsigned char)data[k]);
    PyObject *result = NULL;
    pthread_rwlock_rdlock(&self->lock);
    const Slot *slot = find(self, data, (size_t)len, hash_end(h));
    if (slot != NULL)
        result = PyUnicode_DecodeUTF8(self->bytes + slot->at + slot->word_len,
                                      slot->stem_len, "strict");
    pthread_rwlock_unlock(&self->lock);
    if (slot == NULL)
        Py_RETURN_NONE;
    return result;
}

static Py_ssize_t
stems_len(StemTable *self)
{
    if (!self->has_lock)
        return 0;
    pthread_rwlock_rdlock(&self->lock);
    Py_ssize_t count = (Py_ssize_t)self->count;
    pthread_rwlock_unlock(&self->lock);
    return count;
}

static PyMethodDef stems_methods[] = {
    {"add", (PyCFunction)stems_add, METH_VARARGS,
     "add(words, stems) -> int: remember each word's stem; how many were new."},
    {"get", (PyCFunction)stems_get, METH_O, "get(word): the word's remembered stem, or None."},
    {"join", (PyCFunction)stems_join, METH_O,
     "join(texts) -> (joined, others, missing): each text's ASCII words' terms joined by "
     "spaces (None where a word is not remembered), its pieces past ASCII, and the words "
     "not remembered."},
    {NULL, NULL, 0, NULL},
};

static PySequenceMethods stems_sequence = {
    .sq_length = (lenfunc)stems_len,
};

static PyTypeObject StemTableType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "sift.integrations.stores.sqlite._stems.StemTable",
    .tp_basicsize = sizeof(StemTable),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "StemTable(max_word_chars, max_entries): remembered stems of ASCII words, and "
              "the terms of texts' ASCII words from them.",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)stems_init,
    .tp_dealloc = (destructor)stems_dealloc,
    .tp_methods = stems_methods,
    .tp_as_sequence = &stems_sequence,
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "sift.integrations.stores.sqlite._stems",
    .m_doc = "The BM25 index's terms of ASCII text, from remembered stems, in C.",
    .m_size = -1,
};

PyMODINIT_FUNC
PyInit__stems(void)
{
    if (PyType_Ready(&StemTableType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    if (PyModule_AddObjectRef(m, "StemTable", (PyObject *)&StemTableType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
