/* dispatch TRIPS REPS: the practical floor of a tree-walking interpreter's per-instruction cost
 * (the "noop-loop" row): a loop node whose body is one instruction node, run TRIPS times; each
 * instruction checks the instruction budget, dispatches on its opcode through a table of
 * functions (what `table::row` does) and counts itself as executed. The instruction does
 * nothing, as a NoOp does, so what is left is the interpreter's overhead. */
#include "common.h"

typedef struct {
    unsigned char opcode;
    const char *name;
} Inst;

typedef struct {
    long executed;
    long budget;
    long faults;
} Machine;

typedef void (*Kernel)(Machine *, const Inst *);

static void noop(Machine *m, const Inst *i) {
    (void)m;
    (void)i;
}

static void other(Machine *m, const Inst *i) {
    m->faults += i->opcode;
}

/* Not inlined: the dispatch must stay an indirect call, as it is in the simulator. */
static Kernel volatile table[2] = {noop, other};

__attribute__((noinline)) static int run(Machine *m, const Inst *body, long n, long trips) {
    for (long t = 0; t < trips; t++) {
        for (long k = 0; k < n; k++) {
            if (m->executed >= m->budget) return 1;
            table[body[k].opcode](m, &body[k]);
            m->executed++;
        }
    }
    return 0;
}

int main(int argc, char **argv) {
    long trips = arg(argc, argv, 1, 10000000L);
    int reps = (int)arg(argc, argv, 2, 7);
    Inst body[1] = {{0, "n"}};
    Machine m;
    TIME("noop", reps, m.executed = 0; m.budget = 1000000000000L; m.faults = 0;
         sink = (unsigned char)run(&m, body, 1, trips); sink ^= (unsigned char)m.executed);
    return 0;
}
