/* Shared helpers for the C baselines `cargo xtask bench` compiles with `cc -O3 -march=native
 * -ffp-contract=off -pthread` (no FMA contraction: the same two roundings as the simulator). Each program
 * prints `NAME MS` lines: the median wall time of REPS runs after one warm-up run. "cold" runs
 * write into a freshly allocated destination (first touch of every page, as the first write to
 * a tile in a fresh `birsim run` process); "huge" runs do the same with the destination advised
 * to transparent huge pages (MADV_HUGEPAGE, as NumPy does for large arrays: far fewer page
 * faults), the practical limit for a fresh destination; "warm" runs reuse one. */
#define _DEFAULT_SOURCE
#include <stdio.h>
#include <sys/mman.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *t, int n) {
    qsort(t, n, sizeof *t, cmp_double);
    return t[n / 2];
}

/* Keeps the optimiser from dropping a result. */
static volatile unsigned char sink;

static void *xmalloc(size_t n) {
    void *p = malloc(n);
    if (!p) {
        fprintf(stderr, "out of memory (%zu bytes)\n", n);
        exit(2);
    }
    return p;
}

/* A fresh mapping advised to huge pages; release with fresh_free. */
static inline void *fresh(size_t n) {
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        fprintf(stderr, "mmap of %zu bytes failed\n", n);
        exit(2);
    }
    madvise(p, n, MADV_HUGEPAGE);
    return p;
}

static inline void fresh_free(void *p, size_t n) { munmap(p, n); }

static long arg(int argc, char **argv, int k, long dflt) {
    return argc > k ? atol(argv[k]) : dflt;
}

#define REPS_MAX 64
#define TIME(name, reps, body)                                  \
    do {                                                        \
        double t_[REPS_MAX];                                    \
        int n_ = (reps) < 1 ? 1 : (reps) > REPS_MAX ? REPS_MAX : (reps); \
        { body; }                                               \
        for (int k_ = 0; k_ < n_; k_++) {                       \
            double s_ = now_ms();                               \
            { body; }                                           \
            t_[k_] = now_ms() - s_;                             \
        }                                                       \
        printf("%s %.6f\n", name, median(t_, n_));              \
    } while (0)
