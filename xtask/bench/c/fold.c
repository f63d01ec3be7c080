/* fold PARTS FREE REPS: fp32 sum over the free axis of a [PARTS, FREE] row-major tile.
 * fold16: 16 accumulators per row (reassociates; the practical limit peers.md quotes).
 * inorder16: 16 rows at a time, each row folded strictly in order (bit-exact with an in-order
 * reference: SIMD across partitions, not within one). */
#include "common.h"

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

int main(int argc, char **argv) {
    size_t parts = (size_t)arg(argc, argv, 1, 128), free_ = (size_t)arg(argc, argv, 2, 65536);
    int reps = (int)arg(argc, argv, 3, 7);
    float *x = xmalloc(parts * free_ * 4), *s = xmalloc(parts * 4);
    for (size_t i = 0; i < parts * free_; i++) x[i] = (float)(i % 977) * 0.25f;
    TIME("fold16", reps, fold16(s, x, parts, free_); sink = ((unsigned char *)s)[0]);
    TIME("inorder16", reps, inorder16(s, x, parts, free_); sink = ((unsigned char *)s)[0]);
    free(x);
    free(s);
    return 0;
}
