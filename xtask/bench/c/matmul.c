/* matmul K M N REPS [OUT]: out[m, n] = sum_k mov[k, n] * st[k, m] in fp32 (mov K x N, st K x M,
 * out M x N, all row-major), in the order birsim's Matmult sums (numerics::matmul, fidelity M3):
 * per output row m, acc = +0, then for k = 0..K-1 ascending acc[n] += mov[k, n] * st[k, m], each
 * product and each sum rounded to fp32 (-ffp-contract=off: no FMA). The inner loop runs over N,
 * so it vectorises without changing any element's chain. Inputs are the bench's data (element i
 * is (i % 1000) * 0.5, as xtask's program::value). "cold": into a fresh mapping each rep (every
 * page touched first by the loop, as a fresh simulator's PSUM; a malloc'd result would be the
 * previous rep's memory again after the first, glibc keeping freed chunks of this size); "warm":
 * into one reused result. OUT, when given, receives
 * the result's raw fp32 bits (the bench compares them with birsim's PSUM). */
#include "common.h"

static void matmul(float *restrict out, const float *restrict mov, const float *restrict st, long k_len,
                   long m_len, long n) {
    for (long m = 0; m < m_len; m++) {
        float *restrict acc = out + m * n;
        for (long j = 0; j < n; j++) acc[j] = 0.0f;
        for (long k = 0; k < k_len; k++) {
            const float w = st[k * m_len + m];
            const float *restrict x = mov + k * n;
            for (long j = 0; j < n; j++) acc[j] += x[j] * w;
        }
    }
}

int main(int argc, char **argv) {
    long k_len = arg(argc, argv, 1, 128), m_len = arg(argc, argv, 2, 128), n = arg(argc, argv, 3, 512);
    int reps = (int)arg(argc, argv, 4, 7);
    size_t out_bytes = (size_t)(m_len * n) * 4;
    float *mov = xmalloc((size_t)(k_len * n) * 4), *st = xmalloc((size_t)(k_len * m_len) * 4);
    for (long i = 0; i < k_len * n; i++) mov[i] = (float)(i % 1000) * 0.5f;
    for (long i = 0; i < k_len * m_len; i++) st[i] = (float)(i % 1000) * 0.5f;
    TIME("cold", reps, {
        float *d = fresh(out_bytes);
        matmul(d, mov, st, k_len, m_len, n);
        sink = ((unsigned char *)d)[out_bytes - 1];
        fresh_free(d, out_bytes);
    });
    float *y = xmalloc(out_bytes);
    memset(y, 0, out_bytes);
    TIME("warm", reps, matmul(y, mov, st, k_len, m_len, n); sink = ((unsigned char *)y)[out_bytes - 1]);
    if (argc > 5) {
        FILE *f = fopen(argv[5], "wb");
        if (!f || fwrite(y, 1, out_bytes, f) != out_bytes || fclose(f) != 0) {
            fprintf(stderr, "cannot write %s\n", argv[5]);
            return 2;
        }
    }
    free(y);
    free(mov);
    free(st);
    return 0;
}
