/* The token estimate of text charged by the plain rules (`sift.tokens._plain_tokens`),
   in C: one pass over each text with the GIL released.

   plain(texts, cjk_ranges, latin_per_cjk) gives, for each text, its estimate by the
   plain rules, or -1 when the text is charged as CJK (`sift.tokens.charged_as_cjk`: it
   holds characters of the CJK ranges, at least one for every `latin_per_cjk` ASCII
   letters), which the caller estimates by the CJK rules in Python. `cjk_ranges` is the
   bytes of (first, last) pairs of native uint32 code points, sorted and disjoint.

   The plain rules are the pieces of the pattern `[^\W\d_]+|\d+|\n+|[^\w\s]|_` as
   Python's re matches them on str: \w is Py_UNICODE_ISALNUM or '_', \d
   Py_UNICODE_ISDECIMAL, \s Py_UNICODE_ISSPACE (the macros re itself uses). A piece is
   charged by its first character as `_plain_tokens` charges it: a newline run one, a
   first character that isdigit() a third of the piece's length rounded up, one that
   isalpha() a quarter of the length (an ASCII piece) or its length (any other), and
   anything else one. The numbers are those of the Python rules for every code point
   and in random runs of every class (tests/core/test_tokens.py).

   Why C: chunking was a third of the chunk-and-embed thread, the ingest's critical path
   on the dev corpora, most of it this estimate (benchmarks/results/ingest_ab.md); in
   Python, text past ASCII costs the regex's Unicode classes, about 85 ns a character. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

enum { SPACE, LETTER, DECIMAL, NEWLINE, SINGLE };

static unsigned char ascii_class[128];

static int class_of(Py_UCS4 c) {
    if (c < 128)
        return ascii_class[c];
    if (Py_UNICODE_ISDECIMAL(c))
        return DECIMAL;
    if (Py_UNICODE_ISALNUM(c))
        return LETTER;
    if (Py_UNICODE_ISSPACE(c))
        return SPACE;
    return SINGLE; /* [^\w\s]: '_' is ASCII, in the table */
}

typedef struct {
    PyObject *text; /* a reference held while the GIL is released */
    int kind;
    const void *data;
    Py_ssize_t length;
    long long tokens;
} Text;

static int in_ranges(Py_UCS4 c, const uint32_t *ranges, Py_ssize_t pairs) {
    Py_ssize_t lo = 0, hi = pairs;
    while (lo < hi) {
        Py_ssize_t mid = (lo + hi) / 2;
        if (c > ranges[2 * mid + 1])
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < pairs && c >= ranges[2 * lo];
}

static int charged_as_cjk(const Text *t, const uint32_t *ranges, Py_ssize_t pairs,
                          long long latin_per_cjk) {
    if (t->kind == PyUnicode_1BYTE_KIND || pairs == 0)
        return 0; /* every CJK range is past U+00FF */
    const Py_UCS4 lowest = ranges[0];
    long long cjk = 0, latin = 0;
    for (Py_ssize_t i = 0; i < t->length; i++) {
        Py_UCS4 c = PyUnicode_READ(t->kind, t->data, i);
        if (c < 128)
            latin += (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
        else if (c >= lowest && in_ranges(c, ranges, pairs))
            cjk++;
    }
    return cjk > 0 && cjk * latin_per_cjk >= latin;
}

static long long plain_tokens(const Text *t) {
    const int kind = t->kind;
    const void *data = t->data;
    const Py_ssize_t n = t->length;
    long long total = 0;
    Py_ssize_t i = 0;
    while (i < n) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        int cls = class_of(c);
        Py_ssize_t j = i + 1;
        switch (cls) {
        case SPACE:
            break;
        case SINGLE:
            total += 1;
            break;
        case NEWLINE:
            while (j < n && PyUnicode_READ(kind, data, j) == '\n')
                j++;
            total += 1;
            break;
        case DECIMAL:
            while (j < n && class_of(PyUnicode_READ(kind, data, j)) == DECIMAL)
                j++;
            total += (j - i + 2) / 3;
            break;
        default: { /* LETTER: [^\W\d_]+, charged by its first character */
            int ascii = c < 128;
            for (; j < n; j++) {
                Py_UCS4 d = PyUnicode_READ(kind, data, j);
                if (class_of(d) != LETTER)
                    break;
                ascii &= d < 128;
            }
            Py_ssize_t len = j - i;
            if (Py_UNICODE_ISDIGIT(c))
                total += (len + 2) / 3;
            else if (Py_UNICODE_ISALPHA(c))
                total += ascii ? (len + 3) / 4 : len;
            else
                total += 1;
        }
        }
        i = j;
    }
    return total;
}

static PyObject *plain(PyObject *self, PyObject *args) {
    PyObject *texts;
    Py_buffer view;
    long long latin_per_cjk;
    if (!PyArg_ParseTuple(args, "Oy*L:plain", &texts, &view, &latin_per_cjk))
        return NULL;
    if (!PyList_Check(texts)) {
        PyBuffer_Release(&view);
        return PyErr_Format(PyExc_TypeError, "texts must be a list, not %.100s",
                            Py_TYPE(texts)->tp_name);
    }
    if (view.len % (2 * sizeof(uint32_t)) || latin_per_cjk < 0) {
        PyBuffer_Release(&view);
        PyErr_SetString(PyExc_ValueError,
                        "cjk_ranges must be (first, last) pairs of uint32 and "
                        "latin_per_cjk at least 0");
        return NULL;
    }
    Py_ssize_t pairs = view.len / (Py_ssize_t)(2 * sizeof(uint32_t));
    /* Copied: the buffer need not be aligned for uint32 reads. */
    uint32_t *ranges = PyMem_Malloc(view.len ? (size_t)view.len : 1);
    Py_ssize_t n = PyList_GET_SIZE(texts);
    Text *all = PyMem_Malloc(sizeof(Text) * (n ? (size_t)n : 1));
    if (ranges == NULL || all == NULL) {
        PyMem_Free(ranges);
        PyMem_Free(all);
        PyBuffer_Release(&view);
        return PyErr_NoMemory();
    }
    memcpy(ranges, view.buf, (size_t)view.len);
    PyBuffer_Release(&view);
    for (Py_ssize_t p = 0; p < pairs; p++) {
        if ((p > 0 && ranges[2 * p] <= ranges[2 * p - 1]) || ranges[2 * p] > ranges[2 * p + 1]) {
            PyErr_SetString(PyExc_ValueError, "cjk_ranges must be sorted and disjoint");
            PyMem_Free(ranges);
            PyMem_Free(all);
            return NULL;
        }
    }
    /* Everything is read and checked with the GIL held; the loop then reads only the
       texts' buffers, which never change (str is immutable) and which the references
       taken here keep alive even if another thread empties the list meanwhile. */
    Py_ssize_t used = 0;
    PyObject *out = NULL;
    for (; used < n; used++) {
        PyObject *text = PyList_GET_ITEM(texts, used);
        if (!PyUnicode_Check(text)) {
            PyErr_Format(PyExc_TypeError, "texts[%zd] is %.100s, not str", used,
                         Py_TYPE(text)->tp_name);
            goto done;
        }
#if PY_VERSION_HEX < 0x030C0000
        if (PyUnicode_READY(text) < 0)
            goto done;
#endif
        Py_INCREF(text);
        all[used].text = text;
        all[used].kind = PyUnicode_KIND(text);
        all[used].data = PyUnicode_DATA(text);
        all[used].length = PyUnicode_GET_LENGTH(text);
    }
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++)
        all[i].tokens = charged_as_cjk(&all[i], ranges, pairs, latin_per_cjk)
                            ? -1
                            : plain_tokens(&all[i]);
    Py_END_ALLOW_THREADS
    out = PyList_New(n);
    if (out == NULL)
        goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *count = PyLong_FromLongLong(all[i].tokens);
        if (count == NULL) {
            Py_CLEAR(out);
            goto done;
        }
        PyList_SET_ITEM(out, i, count);
    }
done:
    for (Py_ssize_t i = 0; i < used; i++)
        Py_DECREF(all[i].text);
    PyMem_Free(all);
    PyMem_Free(ranges);
    return out;
}

static PyMethodDef methods[] = {
    {"plain", plain, METH_VARARGS,
     "plain(texts, cjk_ranges, latin_per_cjk): each text's estimate by the plain rules, "
     "or -1 for a text charged as CJK."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_estimate",
    "The plain token estimate, in C (see _estimate.c).", -1, methods,
};

PyMODINIT_FUNC PyInit__estimate(void) {
    for (Py_UCS4 c = 0; c < 128; c++) {
        if (c == '\n')
            ascii_class[c] = NEWLINE;
        else if (c == '_')
            ascii_class[c] = SINGLE;
        else if (Py_UNICODE_ISDECIMAL(c))
            ascii_class[c] = DECIMAL;
        else if (Py_UNICODE_ISALNUM(c))
            ascii_class[c] = LETTER;
        else if (Py_UNICODE_ISSPACE(c))
            ascii_class[c] = SPACE;
        else
            ascii_class[c] = SINGLE;
    }
    return PyModule_Create(&module);
}
