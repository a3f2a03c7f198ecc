/* grep's trigram signatures, set in C: the loop `_trigrams._set_span` runs in numpy.

   set_bits(block, shift, columns, texts) sets, for every trigram (three consecutive code
   points) of every text, one bit of `block`: row `hash(trigram) >> shift`, column
   `columns[i]` of text i. `block` is a writable C-contiguous buffer of
   (1 << (32 - shift)) rows of row_bytes bytes; column c is bit (c & 7) of byte (c >> 3),
   numpy's packbits(bitorder="little"). The texts come case-folded by the caller (Python's
   str.casefold, so the folding is Python's own). The hash is `_trigrams._hash`, in
   uint32 arithmetic that wraps as numpy's does:

       h = c0 * K0 + c1 * K1 + c2 * K2;  h ^= h >> 15;  h *= MIX;  h >>= shift

   The bits are bit for bit those of the numpy path (tests/integrations/stores/sqlite/
   test_trigrams.py). Why C: in numpy the work is a dozen passes over arrays
   as long as the texts (code points, hashes, owners, a scratch matrix, packing), a
   sixth of the ingest's writer thread (benchmarks/results/ingest_profile.md); here it
   is one pass, with the GIL released (the chunk-and-embed thread and the children's
   couriers run meanwhile). */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

#define K0 0x9E3779B1u
#define K1 0x85EBCA77u
#define K2 0xC2B2AE3Du
#define MIX 0x2C1B3C6Du

typedef struct {
    PyObject *text; /* a reference held while the GIL is released */
    int kind;
    const void *data;
    Py_ssize_t length;
    Py_ssize_t column;
} Text;

static void set_text(uint8_t *block, Py_ssize_t row_bytes, unsigned shift, const Text *t) {
    const int kind = t->kind;
    const void *data = t->data;
    uint8_t *byte = block + (t->column >> 3);
    const uint8_t mask = (uint8_t)(1u << (t->column & 7));
    uint32_t a = (uint32_t)PyUnicode_READ(kind, data, 0);
    uint32_t b = (uint32_t)PyUnicode_READ(kind, data, 1);
    for (Py_ssize_t i = 2; i < t->length; i++) {
        uint32_t c = (uint32_t)PyUnicode_READ(kind, data, i);
        uint32_t h = a * K0 + b * K1 + c * K2;
        h ^= h >> 15;
        h *= MIX;
        h >>= shift;
        byte[(Py_ssize_t)h * row_bytes] |= mask;
        a = b;
        b = c;
    }
}

static PyObject *set_bits(PyObject *self, PyObject *args) {
    PyObject *block_obj, *columns, *texts;
    unsigned int shift;
    if (!PyArg_ParseTuple(args, "OIOO:set_bits", &block_obj, &shift, &columns, &texts))
        return NULL;
    if (shift < 17 || shift > 31) {
        PyErr_Format(PyExc_ValueError, "shift must be 17 to 31 (4 to 32,768 rows), got %u",
                     shift);
        return NULL;
    }
    if (!PyList_Check(columns) || !PyList_Check(texts)) {
        PyErr_SetString(PyExc_TypeError, "columns and texts must be lists");
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(texts);
    if (PyList_GET_SIZE(columns) != n) {
        PyErr_Format(PyExc_ValueError, "%zd columns for %zd texts", PyList_GET_SIZE(columns),
                     n);
        return NULL;
    }
    Py_buffer view;
    if (PyObject_GetBuffer(block_obj, &view, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0)
        return NULL;
    Py_ssize_t rows = (Py_ssize_t)1 << (32 - shift);
    Py_ssize_t row_bytes = view.len / rows;
    if (view.len <= 0 || view.len % rows) {
        PyErr_Format(PyExc_ValueError, "the block has %zd bytes, not a multiple of %zd rows",
                     view.len, rows);
        PyBuffer_Release(&view);
        return NULL;
    }
    /* Everything is read and checked with the GIL held; the loop then reads only the
       texts' buffers, which never change (str is immutable) and which the references
       taken here keep alive even if another thread empties the list meanwhile. */
    Text *all = PyMem_Malloc(sizeof(Text) * (n ? n : 1));
    if (all == NULL) {
        PyBuffer_Release(&view);
        return PyErr_NoMemory();
    }
    Py_ssize_t used = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *text = PyList_GET_ITEM(texts, i);
        if (!PyUnicode_Check(text)) {
            PyErr_Format(PyExc_TypeError, "texts[%zd] is %.100s, not str", i,
                         Py_TYPE(text)->tp_name);
            goto fail;
        }
        Py_ssize_t column = PyLong_AsSsize_t(PyList_GET_ITEM(columns, i));
        if (column == -1 && PyErr_Occurred())
            goto fail;
        if (column < 0 || column >= row_bytes * 8) {
            PyErr_Format(PyExc_ValueError, "columns[%zd] is %zd, outside the block's 0 to %zd",
                         i, column, row_bytes * 8 - 1);
            goto fail;
        }
#if PY_VERSION_HEX < 0x030C0000
        if (PyUnicode_READY(text) < 0)
            goto fail;
#endif
        Py_ssize_t length = PyUnicode_GET_LENGTH(text);
        if (length < 3)
            continue;
        Py_INCREF(text);
        all[used].text = text;
        all[used].kind = PyUnicode_KIND(text);
        all[used].data = PyUnicode_DATA(text);
        all[used].length = length;
        all[used].column = column;
        used++;
    }
    Py_BEGIN_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < used; i++)
        set_text((uint8_t *)view.buf, row_bytes, shift, &all[i]);
    Py_END_ALLOW_THREADS
    for (Py_ssize_t i = 0; i < used; i++)
        Py_DECREF(all[i].text);
    PyMem_Free(all);
    PyBuffer_Release(&view);
    Py_RETURN_NONE;
fail:
    for (Py_ssize_t i = 0; i < used; i++)
        Py_DECREF(all[i].text);
    PyMem_Free(all);
    PyBuffer_Release(&view);
    return NULL;
}

static PyMethodDef methods[] = {
    {"set_bits", set_bits, METH_VARARGS,
     "set_bits(block, shift, columns, texts): sets the bit of every trigram of every "
     "(case-folded) text in its column of block."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_signatures",
    "grep's trigram signatures, set in C (see _signatures.c).", -1, methods,
};

PyMODINIT_FUNC PyInit__signatures(void) { return PyModule_Create(&module); }
