/* activation INFILE REPS [OUTDIR]: the Activation rows' C loops over the fp32 values in INFILE
 * (raw little-endian, the same values birsim's row loads), each element widened to double, the
 * function evaluated in double and rounded once to float, as birsim's exact path does:
 *   exp:      (float)exp(x), glibc's exp, into a reused destination ("exp"; birsim's second
 *             Activation writes a tile it wrote before) and into a fresh mapping each rep
 *             ("exp_cold", as a fresh simulator's first);
 *   musl_exp: the same with exp replaced by musl_exp below, the algorithm and code of the Rust
 *             `libm` crate's exp that birsim calls (musl 1.1's src/math/exp.c, from FreeBSD's
 *             e_exp.c), out of line as a library call is;
 *   gelu:     0.5*a*(1+erf(a/sqrt(2))), glibc's erf;
 *   silu:     a/(1+exp(-a)), glibc's exp.
 * OUTDIR, when given, receives exp.bin and musl_exp.bin: the results' raw fp32 bits (the bench
 * compares them with birsim's tile). Link with -lm. */
#include "common.h"
#include <math.h>
#include <stdint.h>

/* musl 1.1's scalbn: x * 2^n, n reduced in steps so no intermediate overflows. */
static double musl_scalbn(double x, int n) {
    union { double f; uint64_t i; } u;
    double y = x;
    if (n > 1023) {
        y *= 0x1p1023;
        n -= 1023;
        if (n > 1023) {
            y *= 0x1p1023;
            n -= 1023;
            if (n > 1023) n = 1023;
        }
    } else if (n < -1022) {
        /* make sure final n < -53 to avoid double rounding in the subnormal range */
        y *= 0x1p-1022 * 0x1p53;
        n += 1022 - 53;
        if (n < -1022) {
            y *= 0x1p-1022 * 0x1p53;
            n += 1022 - 53;
            if (n < -1022) n = -1022;
        }
    }
    u.i = (uint64_t)(0x3ff + n) << 52;
    return y * u.f;
}

static const double half[2] = {0.5, -0.5}, ln2hi = 6.93147180369123816490e-01,
                    ln2lo = 1.90821492927058770002e-10, invln2 = 1.44269504088896338700e+00,
                    P1 = 1.66666666666666019037e-01, P2 = -2.77777777770155933842e-03,
                    P3 = 6.61375632143793436117e-05, P4 = -1.65339022054652515390e-06,
                    P5 = 4.13813679705723846039e-08;

/* musl 1.1's exp (the libm crate's src/math/exp.rs), step for step. */
__attribute__((noinline)) static double musl_exp(double x) {
    double hi, lo, c, xx, y;
    int k, sign;
    union { double f; uint64_t i; } u = {x};
    uint32_t hx = (uint32_t)(u.i >> 32);
    sign = (int)(hx >> 31);
    hx &= 0x7fffffff;
    if (hx >= 0x4086232b) {
        if (isnan(x)) return x;
        if (x > 709.782712893383973096) return x * 0x1p1023;
        if (x < -708.39641853226410622 && x < -745.13321910194110842) return 0;
    }
    if (hx > 0x3fd62e42) {
        if (hx >= 0x3ff0a2b2)
            k = (int)(invln2 * x + half[sign]);
        else
            k = 1 - sign - sign;
        hi = x - k * ln2hi;
        lo = k * ln2lo;
        x = hi - lo;
    } else if (hx > 0x3e300000) {
        k = 0;
        hi = x;
        lo = 0;
    } else {
        return 1 + x;
    }
    xx = x * x;
    c = x - xx * (P1 + xx * (P2 + xx * (P3 + xx * (P4 + xx * P5))));
    y = 1 + (x * c / (2 - c) - lo + hi);
    return k == 0 ? y : musl_scalbn(y, k);
}

static void f_exp(float *restrict y, const float *restrict x, size_t n) {
    for (size_t i = 0; i < n; i++) y[i] = (float)exp((double)x[i]);
}

static void f_musl_exp(float *restrict y, const float *restrict x, size_t n) {
    for (size_t i = 0; i < n; i++) y[i] = (float)musl_exp((double)x[i]);
}

static void f_gelu(float *restrict y, const float *restrict x, size_t n) {
    for (size_t i = 0; i < n; i++) {
        double a = x[i];
        y[i] = (float)(0.5 * a * (1.0 + erf(a / M_SQRT2)));
    }
}

static void f_silu(float *restrict y, const float *restrict x, size_t n) {
    for (size_t i = 0; i < n; i++) {
        double a = x[i];
        y[i] = (float)(a / (1.0 + exp(-a)));
    }
}

static void save(const char *dir, const char *name, const float *y, size_t n) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(y, 4, n, f) != n || fclose(f) != 0) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(2);
    }
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: activation INFILE REPS [OUTDIR]\n");
        return 2;
    }
    int reps = (int)atol(argv[2]);
    FILE *f = fopen(argv[1], "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", argv[1]);
        return 2;
    }
    fseek(f, 0, SEEK_END);
    size_t n = (size_t)ftell(f) / 4, bytes = n * 4;
    rewind(f);
    float *x = xmalloc(bytes), *y = xmalloc(bytes);
    if (fread(x, 4, n, f) != n) {
        fprintf(stderr, "cannot read %s\n", argv[1]);
        return 2;
    }
    fclose(f);
    memset(y, 0, bytes);
    TIME("exp", reps, f_exp(y, x, n); sink = ((unsigned char *)y)[bytes - 1]);
    if (argc > 3) save(argv[3], "exp.bin", y, n);
    TIME("exp_cold", reps, {
        float *d = fresh(bytes);
        f_exp(d, x, n);
        sink = ((unsigned char *)d)[bytes - 1];
        fresh_free(d, bytes);
    });
    TIME("musl_exp", reps, f_musl_exp(y, x, n); sink = ((unsigned char *)y)[bytes - 1]);
    if (argc > 3) save(argv[3], "musl_exp.bin", y, n);
    TIME("gelu", reps, f_gelu(y, x, n); sink = ((unsigned char *)y)[bytes - 1]);
    TIME("silu", reps, f_silu(y, x, n); sink = ((unsigned char *)y)[bytes - 1]);
    free(x);
    free(y);
    return 0;
}
