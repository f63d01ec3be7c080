/* indirect MODE ROWS D IDXFILE REPS: the limits for the indirect ops (issue "indirection").
 * IDXFILE holds the int32 row indices, raw little-endian (the same ids birsim's row uses).
 *   gather: out[j] = table[idx[j]] (one memcpy of D fp32 per row) into a fresh huge-page
 *           destination ("huge"), the table ROWS x D fp32 warm.
 *   add32:  table[idx[j]][k] += val[j][k], serial and in order, fp32, into the warm table ("warm").
 *   add16:  the same on bfloat16 bits: widen, add in fp32, round to nearest even back to bf16 at
 *           every step (NaN kept quiet), as the simulator's accumulate does ("warm"). */
#include "common.h"
#include <stdint.h>

static uint16_t bf16_round(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return (uint16_t)((u >> 16) | 0x40);
    u += 0x7FFFu + ((u >> 16) & 1u);
    return (uint16_t)(u >> 16);
}

static float bf16_widen(uint16_t h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

int main(int argc, char **argv) {
    if (argc < 6) {
        fprintf(stderr, "usage: indirect gather|add32|add16 ROWS D IDXFILE REPS\n");
        return 2;
    }
    const char *mode = argv[1];
    size_t rows = (size_t)atol(argv[2]), d = (size_t)atol(argv[3]);
    int reps = (int)atol(argv[5]);
    FILE *f = fopen(argv[4], "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", argv[4]);
        return 2;
    }
    fseek(f, 0, SEEK_END);
    size_t n = (size_t)ftell(f) / 4;
    fseek(f, 0, SEEK_SET);
    int32_t *idx = xmalloc(n * 4);
    if (fread(idx, 4, n, f) != n) return 2;
    fclose(f);
    if (!strcmp(mode, "gather")) {
        float *table = xmalloc(rows * d * 4);
        for (size_t i = 0; i < rows * d; i++) table[i] = (float)(i % 1000);
        TIME("huge", reps, {
            float *out = fresh(n * d * 4);
            for (size_t j = 0; j < n; j++) memcpy(out + j * d, table + (size_t)idx[j] * d, d * 4);
            sink = ((unsigned char *)out)[n * d];
            fresh_free(out, n * d * 4);
        });
    } else if (!strcmp(mode, "add32")) {
        float *table = xmalloc(rows * d * 4), *val = xmalloc(n * d * 4);
        for (size_t i = 0; i < rows * d; i++) table[i] = (float)(i % 7) * 0.25f;
        for (size_t i = 0; i < n * d; i++) val[i] = (float)(i % 13) * 0.125f;
        TIME("warm", reps, {
            for (size_t j = 0; j < n; j++) {
                float *t = table + (size_t)idx[j] * d;
                const float *v = val + j * d;
                for (size_t k = 0; k < d; k++) t[k] = t[k] + v[k];
            }
            sink = ((unsigned char *)table)[d];
        });
    } else if (!strcmp(mode, "add16")) {
        uint16_t *table = xmalloc(rows * d * 2), *val = xmalloc(n * d * 2);
        for (size_t i = 0; i < rows * d; i++) table[i] = bf16_round((float)(i % 7) * 0.25f);
        for (size_t i = 0; i < n * d; i++) val[i] = bf16_round((float)(i % 13) * 0.125f);
        TIME("warm", reps, {
            for (size_t j = 0; j < n; j++) {
                uint16_t *t = table + (size_t)idx[j] * d;
                const uint16_t *v = val + j * d;
                for (size_t k = 0; k < d; k++) t[k] = bf16_round(bf16_widen(t[k]) + bf16_widen(v[k]));
            }
            sink = ((unsigned char *)table)[d];
        });
    } else {
        fprintf(stderr, "unknown mode %s\n", mode);
        return 2;
    }
    return 0;
}
