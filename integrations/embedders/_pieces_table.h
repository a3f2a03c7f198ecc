/* The static embedder's table of pieces (_pieces.c): an FNV-1a hash fed one character
 * at a time, and the growth of an open-addressing table (linear probing, a power-of-two
 * capacity) and of scratch buffers. The table's slot is the includer's, its first member
 * the uint64_t hash (0: an empty slot).
 *
 * SIFT_HASH_MASK: tests build a module with a few hash bits only, so that keys collide
 * and the code that tells them apart runs. */
#ifndef SIFT_NATIVE_TABLE_H
#define SIFT_NATIVE_TABLE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define HASH_START 1469598103934665603ULL

static inline uint64_t
hash_step(uint64_t h, uint32_t c)
{
    return (h ^ (uint64_t)c) * 1099511628211ULL;
}

static inline uint64_t
hash_end(uint64_t h)
{
    h ^= h >> 29; /* the low bits pick the slot: mix the high ones down */
#ifdef SIFT_HASH_MASK
    h &= SIFT_HASH_MASK;
#endif
    return h ? h : 1;
}

/* Makes room for `need` items of `item` bytes in *buffer (doubling): 0, or -1 when out
 * of memory (the buffer is left as it was). */
static int
grow(void **buffer, size_t *cap, size_t need, size_t item)
{
    if (need <= *cap)
        return 0;
    size_t cap2 = *cap ? *cap : 4096;
    while (cap2 < need)
        cap2 *= 2;
    void *moved = realloc(*buffer, cap2 * item);
    if (moved == NULL)
        return -1;
    *buffer = moved;
    *cap = cap2;
    return 0;
}

static inline uint64_t
slot_hash(const char *slot)
{
    uint64_t h;
    memcpy(&h, slot, sizeof h);
    return h;
}

/* Moves the table's slots (`size` bytes each) into a new array of `capacity` slots: 0,
 * or -1 when out of memory (the table is left as it was). */
static int
rehash(void **slots, size_t *capacity, size_t to, size_t size)
{
    char *moved = calloc(to, size);
    if (moved == NULL)
        return -1;
    const char *old = *slots;
    size_t mask = to - 1;
    for (size_t i = 0; i < *capacity; i++) {
        uint64_t h = slot_hash(old + i * size);
        if (h == 0)
            continue;
        size_t at = (size_t)h & mask;
        while (slot_hash(moved + at * size) != 0)
            at = (at + 1) & mask;
        memcpy(moved + at * size, old + i * size, size);
    }
    free(*slots);
    *slots = moved;
    *capacity = to;
    return 0;
}

#endif
