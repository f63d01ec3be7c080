/* memset BYTES REPS: one memset of BYTES, into a warm, a fresh and a fresh huge-page destination
 * (the limit for Iota and Memset, which synthesise their output). */
#include "common.h"

int main(int argc, char **argv) {
    size_t n = (size_t)arg(argc, argv, 1, 32L << 20);
    int reps = (int)arg(argc, argv, 2, 7);
    unsigned char *dst = xmalloc(n);
    memset(dst, 0, n);
    TIME("warm", reps, memset(dst, 0x5A, n); sink = dst[n / 2]);
    free(dst);
    TIME("cold", reps, {
        unsigned char *d = xmalloc(n);
        memset(d, 0x5A, n);
        sink = d[n / 2];
        free(d);
    });
    TIME("huge", reps, {
        unsigned char *d = fresh(n);
        memset(d, 0x5A, n);
        sink = d[n / 2];
        fresh_free(d, n);
    });
    return 0;
}
