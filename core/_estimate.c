/* The token estimate (`sift.tokens.estimate_tokens`) in C: one pass over each text with
   the GIL released.

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
   and in random runs of every class (tests/core/test_estimate.py).

   estimate(texts, cjk_ranges, cjk_costs, latin_per_cjk, cjk_context) gives each text's
   whole estimate: by the plain rules, or, for a text charged as CJK (every text with
   `cjk_context`), by the CJK rules of `estimate_tokens`: the pieces of
   `[CJK]+|[^\W\d_CJK]+|\d+|\n+|[^\w\s]|_`, a CJK run charged its characters' costs
   (`cjk_costs`: one byte per code point of each range in turn, the tokens it costs,
   1 to 3, taken as given: its length is checked per call, not its bytes) plus one, and
   two more per character past U+FFFF; a Latin word one token per two ASCII letters (or
   one more per character from U+0800 of another script), a number one more.

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

/* The index of the range holding c, or -1. */
static Py_ssize_t range_of(Py_UCS4 c, const uint32_t *ranges, Py_ssize_t pairs) {
    if (pairs == 0 || c < ranges[0])
        return -1;
    Py_ssize_t lo = 0, hi = pairs;
    while (lo < hi) {
        Py_ssize_t mid = (lo + hi) / 2;
        if (c > ranges[2 * mid + 1])
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < pairs && c >= ranges[2 * lo] ? lo : -1;
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
        else if (c >= lowest && range_of(c, ranges, pairs) >= 0)
            cjk++;
    }
    return cjk > 0 && cjk * latin_per_cjk >= latin;
}

typedef struct {
    const uint32_t *ranges;
    Py_ssize_t pairs;
    const Py_ssize_t *offsets; /* where each range's costs start in costs */
    const unsigned char *costs;
} Table;

/* The range of `cjk` holding c, or -1 (always -1 without a table: the plain rules). */
static Py_ssize_t cjk_range(Py_UCS4 c, const Table *cjk) {
    return cjk == NULL || c < 128 ? -1 : range_of(c, cjk->ranges, cjk->pairs);
}

/* The estimate of a text by the plain rules (`cjk` NULL), or by the CJK rules of
   `estimate_tokens(text, cjk_context=True)`, whose pieces are the plain ones but for
   runs of CJK characters, which break Latin words. */
static long long text_tokens(const Text *t, const Table *cjk) {
    const int kind = t->kind;
    const void *data = t->data;
    const Py_ssize_t n = t->length;
    long long total = 0;
    Py_ssize_t i = 0;
    while (i < n) {
        Py_UCS4 c = PyUnicode_READ(kind, data, i);
        Py_ssize_t at = cjk_range(c, cjk);
        Py_ssize_t j = i + 1;
        if (at >= 0) { /* [CJK]+: each character's cost, one more for the run */
            total += 1;
            for (;;) {
                total += cjk->costs[cjk->offsets[at] + (c - cjk->ranges[2 * at])];
                total += c > 0xFFFF ? 2 : 0;
                if (j >= n)
                    break;
                c = PyUnicode_READ(kind, data, j);
                at = cjk_range(c, cjk);
                if (at < 0)
                    break;
                j++;
            }
            i = j;
            continue;
        }
        switch (class_of(c)) {
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
        case DECIMAL: /* \d+ goes on into full-width digits, which are CJK */
            while (j < n && class_of(PyUnicode_READ(kind, data, j)) == DECIMAL)
                j++;
            total += (j - i + 2) / 3;
            total += cjk != NULL; /* the space before a number: a token of its own */
            break;
        default: { /* LETTER: [^\W\d_]+, in CJK text [^\W\d_CJK]+ */
            int ascii = c < 128;
            long long wide = c >= 0x800;
            for (; j < n; j++) {
                Py_UCS4 d = PyUnicode_READ(kind, data, j);
                if (class_of(d) != LETTER || cjk_range(d, cjk) >= 0)
                    break;
                ascii &= d < 128;
                wide += d >= 0x800;
            }
            Py_ssize_t len = j - i;
            if (Py_UNICODE_ISDIGIT(c))
                total += (len + 2) / 3 + (cjk != NULL);
            else if (Py_UNICODE_ISALPHA(c))
                /* Beside CJK: names and acronyms, a token per two letters, or one more
                   per character of a three-byte script. */
                total += ascii ? (len + 3) / 4 + (cjk != NULL) * ((len + 1) / 2 - (len + 3) / 4)
                               : len + (cjk != NULL) * wide;
            else
                total += 1;
        }
        }
        i = j;
    }
    return total;
}

/* The ranges as (first, last) uint32 pairs, copied (the buffer need not be aligned for
   uint32 reads) and checked: sorted, disjoint, first <= last. NULL with an error set. */
static uint32_t *read_ranges(const Py_buffer *view, Py_ssize_t *pairs) {
    if (view->len % (Py_ssize_t)(2 * sizeof(uint32_t))) {
        PyErr_SetString(PyExc_ValueError, "cjk_ranges must be (first, last) pairs of uint32");
        return NULL;
    }
    *pairs = view->len / (Py_ssize_t)(2 * sizeof(uint32_t));
    uint32_t *ranges = PyMem_Malloc(view->len ? (size_t)view->len : 1);
    if (ranges == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    memcpy(ranges, view->buf, (size_t)view->len);
    for (Py_ssize_t p = 0; p < *pairs; p++) {
        if ((p > 0 && ranges[2 * p] <= ranges[2 * p - 1]) || ranges[2 * p] > ranges[2 * p + 1]) {
            PyErr_SetString(PyExc_ValueError, "cjk_ranges must be sorted and disjoint");
            PyMem_Free(ranges);
            return NULL;
        }
    }
    return ranges;
}

/* The texts of a list, each with a reference taken (the loop later runs without the
   GIL, reading only the texts' buffers: str is immutable, and the references keep them
   alive even if another thread empties the list meanwhile). NULL with an error set. */
static Text *read_texts(PyObject *texts, Py_ssize_t *count) {
    if (!PyList_Check(texts)) {
        PyErr_Format(PyExc_TypeError, "texts must be a list, not %.100s",
                     Py_TYPE(texts)->tp_name);
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(texts);
    Text *all = PyMem_Malloc(sizeof(Text) * (n ? (size_t)n : 1));
    if (all == NULL) {
        PyErr_NoMemory();
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *text = PyList_GET_ITEM(texts, i);
        int bad = !PyUnicode_Check(text);
        if (bad)
            PyErr_Format(PyExc_TypeError, "texts[%zd] is %.100s, not str", i,
                         Py_TYPE(text)->tp_name);
#if PY_VERSION_HEX < 0x030C0000
        else
            bad = PyUnicode_READY(text) < 0;
#endif
        if (bad) {
            for (Py_ssize_t k = 0; k < i; k++)
                Py_DECREF(all[k].text);
            PyMem_Free(all);
            return NULL;
        }
        Py_INCREF(text);
        all[i].text = text;
        all[i].kind = PyUnicode_KIND(text);
        all[i].data = PyUnicode_DATA(text);
        all[i].length = PyUnicode_GET_LENGTH(text);
    }
    *count = n;
    return all;
}

/* The counts as a list of ints; lets the texts go. */
static PyObject *counts(Text *all, Py_ssize_t n) {
    PyObject *out = PyList_New(n);
    for (Py_ssize_t i = 0; i < n && out != NULL; i++) {
        PyObject *count = PyLong_FromLongLong(all[i].tokens);
        if (count == NULL)
            Py_CLEAR(out);
        else
            PyList_SET_ITEM(out, i, count);
    }
    for (Py_ssize_t i = 0; i < n; i++)
        Py_DECREF(all[i].text);
    PyMem_Free(all);
    return out;
}

static PyObject *plain(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *texts;
    Py_buffer view;
    long long latin_per_cjk;
    if (!PyArg_ParseTuple(args, "Oy*L:plain", &texts, &view, &latin_per_cjk))
        return NULL;
    Py_ssize_t pairs = 0, n = 0;
    uint32_t *ranges = read_ranges(&view, &pairs);
    PyBuffer_Release(&view);
    if (ranges == NULL)
        return NULL;
    Text *all = read_texts(texts, &n);
    if (all == NULL) {
        PyMem_Free(ranges);
        return NULL;
    }
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++)
        all[i].tokens = charged_as_cjk(&all[i], ranges, pairs, latin_per_cjk)
                            ? -1
                            : text_tokens(&all[i], NULL);
    Py_END_ALLOW_THREADS
    PyMem_Free(ranges);
    return counts(all, n);
}

static PyObject *estimate(PyObject *Py_UNUSED(self), PyObject *args) {
    PyObject *texts;
    Py_buffer view, costs;
    long long latin_per_cjk;
    int cjk_context;
    if (!PyArg_ParseTuple(args, "Oy*y*Lp:estimate", &texts, &view, &costs, &latin_per_cjk,
                          &cjk_context))
        return NULL;
    Py_ssize_t pairs = 0, n = 0;
    uint32_t *ranges = read_ranges(&view, &pairs);
    PyBuffer_Release(&view);
    Py_ssize_t *offsets = PyMem_Malloc(sizeof(Py_ssize_t) * (pairs ? (size_t)pairs : 1));
    Text *all = NULL;
    PyObject *out = NULL;
    if (ranges == NULL || offsets == NULL) {
        if (ranges != NULL)
            PyErr_NoMemory();
        goto done;
    }
    Py_ssize_t size = 0;
    for (Py_ssize_t p = 0; p < pairs; p++) {
        offsets[p] = size;
        size += (Py_ssize_t)(ranges[2 * p + 1] - ranges[2 * p]) + 1;
    }
    if (costs.len != size) {
        PyErr_Format(PyExc_ValueError,
                     "cjk_costs has %zd bytes, not one per code point of the ranges (%zd)",
                     costs.len, size);
        goto done;
    }
    all = read_texts(texts, &n);
    if (all == NULL)
        goto done;
    Table table = {ranges, pairs, offsets, (const unsigned char *)costs.buf};
    /* costs' buffer stays valid: the view holds its exporter until released below. */
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < n; i++)
        all[i].tokens = text_tokens(
            &all[i],
            cjk_context || charged_as_cjk(&all[i], ranges, pairs, latin_per_cjk) ? &table : NULL);
    Py_END_ALLOW_THREADS
    out = counts(all, n);
done:
    PyBuffer_Release(&costs);
    PyMem_Free(ranges);
    PyMem_Free(offsets);
    return out;
}

static PyMethodDef methods[] = {
    {"plain", plain, METH_VARARGS,
     "plain(texts, cjk_ranges, latin_per_cjk): each text's estimate by the plain rules, "
     "or -1 for a text charged as CJK."},
    {"estimate", estimate, METH_VARARGS,
     "estimate(texts, cjk_ranges, cjk_costs, latin_per_cjk, cjk_context): each text's "
     "estimate, by the CJK rules for a text charged as CJK (every text with cjk_context)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_estimate",
    "The token estimate, in C (see _estimate.c).", -1, methods,
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
