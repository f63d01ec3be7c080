/* Independent oracle for birsim's Pool generator: the Xorwow step of re-facts §7 with the
 * per-row seeding of docs/fidelity.md D7. Prints 2,500 draws for each of four (row, seed) cases.
 * Build: gcc -O2 -o xorwow xorwow.c && ./xorwow > ../data/xorwow.txt */
#include <stdint.h>
#include <stdio.h>

typedef struct { uint32_t s[5]; uint32_t counter; } xw;

static void init(xw *x, uint32_t row, int seeded, uint64_t seed) {
    for (int i = 0; i < 5; ++i) x->s[i] = 0xFFFFFFFFu;
    x->s[4] = 0xFFFFFFFFu ^ row;
    if (seeded) { x->s[0] = (uint32_t)seed; x->s[1] = (uint32_t)(seed >> 32); }
    x->counter = 0;
}

static uint32_t next(xw *x) {
    uint32_t t = x->s[0] ^ (x->s[0] >> 2);
    x->s[0] = x->s[1]; x->s[1] = x->s[2]; x->s[2] = x->s[3]; x->s[3] = x->s[4];
    x->s[4] = (x->s[4] ^ (x->s[4] << 4)) ^ (t ^ (t << 1));
    x->counter += 362437u;
    return x->counter + x->s[4];
}

int main(void) {
    struct { uint32_t row; int seeded; uint64_t seed; } cases[4] = {
        {0, 0, 0}, {5, 0, 0}, {127, 0, 0}, {3, 1, 0x123456789ABCDEF0ull}};
    for (int c = 0; c < 4; ++c) {
        xw x;
        init(&x, cases[c].row, cases[c].seeded, cases[c].seed);
        if (cases[c].seeded) printf("# row %u %llu\n", cases[c].row, (unsigned long long)cases[c].seed);
        else printf("# row %u\n", cases[c].row);
        for (int i = 0; i < 2500; ++i) printf("%u\n", next(&x));
    }
    return 0;
}
