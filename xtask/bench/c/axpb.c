/* axpb N REPS: y = x * 1.5f + 0.25f over N fp32 values (two roundings, as TensorScalar mult then
 * add), into a warm, a fresh and a fresh huge-page destination. */
#include "common.h"

static void axpb(float *restrict y, const float *restrict x, size_t n) {
    for (size_t i = 0; i < n; i++) y[i] = x[i] * 1.5f + 0.25f;
}

int main(int argc, char **argv) {
    size_t n = (size_t)arg(argc, argv, 1, 128L * 65536);
    int reps = (int)arg(argc, argv, 2, 7);
    float *x = xmalloc(n * 4), *y = xmalloc(n * 4);
    for (size_t i = 0; i < n; i++) x[i] = (float)(i % 1000) * 0.5f;
    memset(y, 0, n * 4);
    TIME("warm", reps, axpb(y, x, n); sink = ((unsigned char *)y)[n]);
    free(y);
    TIME("cold", reps, {
        float *d = xmalloc(n * 4);
        axpb(d, x, n);
        sink = ((unsigned char *)d)[n];
        free(d);
    });
    TIME("huge", reps, {
        float *d = fresh(n * 4);
        axpb(d, x, n);
        sink = ((unsigned char *)d)[n];
        fresh_free(d, n * 4);
    });
    free(x);
    return 0;
}
