/* fold PARTS FREE REPS: fp32 sum over the free axis of a [PARTS, FREE] row-major tile.
 * fold16: 16 accumulators per row (reassociates; the practical limit peers.md quotes).
 * fold16x2: the same on two threads, half the rows each (what two cores' memory reads give).
 * inorder16: 16 rows at a time, each row folded strictly in order (bit-exact with an in-order
 * reference: SIMD across partitions, not within one). */
#include "common.h"
#include <pthread.h>

static void fold16(float *restrict s, const float *restrict x, size_t parts, size_t free_) {
    for (size_t p = 0; p < parts; p++) {
        const float *row = x + p * free_;
        float acc[16] = {0};
        size_t j = 0;
        for (; j + 16 <= free_; j += 16)
            for (int k = 0; k < 16; k++) acc[k] += row[j + k];
        float t = 0;
        for (int k = 0; k < 16; k++) t += acc[k];
        for (; j < free_; j++) t += row[j];
        s[p] = t;
    }
}

static void inorder16(float *restrict s, const float *restrict x, size_t parts, size_t free_) {
    size_t p = 0;
    for (; p + 16 <= parts; p += 16) {
        float acc[16] = {0};
        for (size_t j = 0; j < free_; j++)
            for (int k = 0; k < 16; k++) acc[k] += x[(p + k) * free_ + j];
        for (int k = 0; k < 16; k++) s[p + k] = acc[k];
    }
    for (; p < parts; p++) {
        float t = 0;
        for (size_t j = 0; j < free_; j++) t += x[p * free_ + j];
        s[p] = t;
    }
}

struct half {
    float *s;
    const float *x;
    size_t parts, free_;
};

static void *fold16_half(void *arg) {
    struct half *h = arg;
    fold16(h->s, h->x, h->parts, h->free_);
    return NULL;
}

/* fold16 over two threads: the first half of the rows on a new thread, the rest here. */
static void fold16x2(float *restrict s, const float *restrict x, size_t parts, size_t free_) {
    size_t a = parts / 2;
    struct half h = {s, x, a, free_};
    pthread_t t;
    if (pthread_create(&t, NULL, fold16_half, &h) != 0) {
        fold16(s, x, parts, free_);
        return;
    }
    fold16(s + a, x + a * free_, parts - a, free_);
    pthread_join(t, NULL);
}

int main(int argc, char **argv) {
    size_t parts = (size_t)arg(argc, argv, 1, 128), free_ = (size_t)arg(argc, argv, 2, 65536);
    int reps = (int)arg(argc, argv, 3, 7);
    float *x = xmalloc(parts * free_ * 4), *s = xmalloc(parts * 4);
    for (size_t i = 0; i < parts * free_; i++) x[i] = (float)(i % 977) * 0.25f;
    TIME("fold16", reps, fold16(s, x, parts, free_); sink = ((unsigned char *)s)[0]);
    TIME("fold16x2", reps, fold16x2(s, x, parts, free_); sink = ((unsigned char *)s)[0]);
    TIME("inorder16", reps, inorder16(s, x, parts, free_); sink = ((unsigned char *)s)[0]);
    free(x);
    free(s);
    return 0;
}
