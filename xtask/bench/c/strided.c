/* strided REPS SRC_ELEMS STEP NUM [STEP NUM ...]: the plain C reading of a 4-byte access pattern
 * (at most 4 [step, num] levels, outermost first, steps in elements): nested loops writing the
 * elements in order into a freshly malloc'd destination with ordinary stores, as NumPy's
 * `ascontiguousarray` of the same view does. Prints `loop MS`: the ceiling a cached-store copy
 * reaches on this machine, beside NumPy and birsim in the ap-strided rows. */
#include "common.h"
#include <stdint.h>

int main(int argc, char **argv) {
    int reps = (int)arg(argc, argv, 1, 7);
    size_t n_src = (size_t)arg(argc, argv, 2, 1 << 20);
    long step[4] = {0, 0, 0, 0}, num[4] = {1, 1, 1, 1};
    int levels = (argc - 3) / 2;
    if (levels < 1 || levels > 4) {
        fprintf(stderr, "1 to 4 [step, num] levels\n");
        return 2;
    }
    /* Right-align the levels, so the innermost is always level 3. */
    for (int k = 0; k < levels; k++) {
        step[4 - levels + k] = atol(argv[3 + 2 * k]);
        num[4 - levels + k] = atol(argv[4 + 2 * k]);
    }
    size_t n = (size_t)(num[0] * num[1] * num[2] * num[3]);
    uint32_t *src = xmalloc(n_src * 4);
    for (size_t i = 0; i < n_src; i++) src[i] = (uint32_t)i;
    const long s0 = step[0], s1 = step[1], s2 = step[2], s3 = step[3];
    TIME("loop", reps, {
        uint32_t *d = xmalloc(n * 4);
        uint32_t *o = d;
        for (long i = 0; i < num[0]; i++)
            for (long j = 0; j < num[1]; j++)
                for (long k = 0; k < num[2]; k++) {
                    const uint32_t *row = src + i * s0 + j * s1 + k * s2;
                    for (long x = 0; x < num[3]; x++) *o++ = row[x * s3];
                }
        sink = (unsigned char)d[n / 2];
        free(d);
    });
    free(src);
    return 0;
}
