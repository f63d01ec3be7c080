/* memcpy BYTES REPS: one memcpy of BYTES, into a warm, a fresh and a fresh huge-page destination. */
#include "common.h"

int main(int argc, char **argv) {
    size_t n = (size_t)arg(argc, argv, 1, 32L << 20);
    int reps = (int)arg(argc, argv, 2, 7);
    unsigned char *src = xmalloc(n), *dst = xmalloc(n);
    for (size_t i = 0; i < n; i++) src[i] = (unsigned char)(i * 2654435761u >> 7);
    memset(dst, 0, n);
    TIME("warm", reps, memcpy(dst, src, n); sink = dst[n / 2]);
    free(dst);
    TIME("cold", reps, {
        unsigned char *d = xmalloc(n);
        memcpy(d, src, n);
        sink = d[n / 2];
        free(d);
    });
    TIME("huge", reps, {
        unsigned char *d = fresh(n);
        memcpy(d, src, n);
        sink = d[n / 2];
        fresh_free(d, n);
    });
    free(src);
    return 0;
}
