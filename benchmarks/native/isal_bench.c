/*
 * ISA-L called directly from C: the ceiling for Hayloft's JNI backend on the same ISA-L build.
 *
 *   isal_bench K R UNIT_BYTES SECONDS_PER_TRIAL [TRIALS]
 *
 * Reuses one stripe of K data + R parity units (like the JMH benchmark), RS with ISA-L's Cauchy
 * matrix (gf_gen_cauchy1_matrix, the matrix Hayloft uses), and prints one line per measurement:
 *   encode           ec_encode_data, K inputs -> R parities
 *   repair1          rebuild data unit 0 from units 1..K: survivor matrix inverted with
 *                    gf_invert_matrix, one decode row, ec_encode_data K -> 1
 *   accum-scratch    out ^= M*in by encoding 32 KiB tiles into scratch and XORing (Hayloft's choice)
 *   accum-update     out ^= M*in by one ec_encode_data_update per input
 * Throughput is input bytes (K x UNIT_BYTES) per second, in GB/s (10^9), best of TRIALS trials
 * (default 5), twice: per second of wall time, and per second of this thread's CPU time (which
 * a shared, overloaded machine disturbs far less).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <isa-l.h>

#define TILE (32 * 1024)

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static double cpu_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* Best CPU-time throughput of the last measure(): immune to time spent descheduled. */
static double best_cpu;

/* The same XOR as the JNI shim's: vectorised (-O3) for the widest unit present. */
__attribute__((target_clones("avx512f", "avx2", "default")))
static void xor_into(unsigned char *restrict d, const unsigned char *restrict s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        d[i] ^= s[i];
    }
}

static unsigned char **scratch_rows;

static void accum_scratch(int len, int k, int rows, unsigned char *g, unsigned char **in, unsigned char **out) {
    unsigned char *x[256];
    for (int base = 0; base < len; base += TILE) {
        int n = len - base < TILE ? len - base : TILE;
        for (int j = 0; j < k; j++) x[j] = in[j] + base;
        ec_encode_data(n, k, rows, g, x, scratch_rows);
        for (int i = 0; i < rows; i++) xor_into(out[i] + base, scratch_rows[i], (size_t) n);
    }
}

static void accum_update(int len, int k, int rows, unsigned char *g, unsigned char **in, unsigned char **out) {
    for (int j = 0; j < k; j++) ec_encode_data_update(len, k, rows, j, g, in[j], out);
}

typedef void (*op_fn)(int, int, int, unsigned char *, unsigned char **, unsigned char **);

static void plain(int len, int k, int rows, unsigned char *g, unsigned char **in, unsigned char **out) {
    ec_encode_data(len, k, rows, g, in, out);
}

static int trials = 5;

static double measure(op_fn f, int len, int k, int rows, unsigned char *g, unsigned char **in,
                      unsigned char **out, double seconds) {
    double best = 0;
    best_cpu = 0;
    for (int trial = 0; trial < trials; trial++) {
        long ops = 0;
        double t0 = now(), c0 = cpu_now(), t;
        do {
            f(len, k, rows, g, in, out);
            ops++;
            t = now();
        } while (t - t0 < seconds);
        double c = cpu_now() - c0;
        double bytes = (double) ops * k * (double) len;
        if (bytes / (t - t0) / 1e9 > best) best = bytes / (t - t0) / 1e9;
        if (c > 0 && bytes / c / 1e9 > best_cpu) best_cpu = bytes / c / 1e9;
    }
    return best;
}

int main(int argc, char **argv) {
    if (argc != 5 && argc != 6) {
        fprintf(stderr, "usage: %s K R UNIT_BYTES SECONDS_PER_TRIAL [TRIALS]\n", argv[0]);
        return 2;
    }
    int k = atoi(argv[1]), r = atoi(argv[2]), len = atoi(argv[3]);
    double seconds = atof(argv[4]);
    if (argc == 6) trials = atoi(argv[5]);
    if (k < 1 || r < 1 || k + r > 256 || len < 1 || seconds <= 0 || trials < 1) {
        fprintf(stderr, "bad arguments: k=%d r=%d unit=%d seconds=%g\n", k, r, len, seconds);
        return 2;
    }
    int n = k + r;
    unsigned char *a = malloc((size_t) n * k), *g = malloc(32 * (size_t) k * r);
    unsigned char *units[256];
    for (int i = 0; i < n; i++) {
        if (posix_memalign((void **) &units[i], 64, (size_t) len) != 0) return 1;
        for (int t = 0; t < len; t++) units[i][t] = (unsigned char) rand();
    }
    scratch_rows = malloc(sizeof(unsigned char *) * (size_t) r);
    for (int i = 0; i < r; i++) {
        if (posix_memalign((void **) &scratch_rows[i], 64, TILE) != 0) return 1;
    }
    gf_gen_cauchy1_matrix(a, n, k);
    ec_init_tables(k, r, a + (size_t) k * k, g);

    double enc = measure(plain, len, k, r, g, units, units + k, seconds), enc_cpu = best_cpu;

    /* Repair unit 0 from units 1..k: rows 1..k of the generator, inverted; row 0 of the inverse. */
    unsigned char *b = malloc((size_t) k * k), *inv = malloc((size_t) k * k), *g1 = malloc(32 * (size_t) k);
    for (int i = 0; i < k; i++) memcpy(b + (size_t) i * k, a + (size_t) (i + 1) * k, (size_t) k);
    if (gf_invert_matrix(b, inv, k) != 0) {
        fprintf(stderr, "survivor matrix singular\n");
        return 1;
    }
    ec_init_tables(k, 1, inv, g1);
    unsigned char *rebuilt = NULL;
    if (posix_memalign((void **) &rebuilt, 64, (size_t) len) != 0) return 1;
    unsigned char *out1[1] = {rebuilt};
    double rep = measure(plain, len, k, 1, g1, units + 1, out1, seconds), rep_cpu = best_cpu;
    ec_encode_data(len, k, 1, g1, units + 1, out1);
    if (memcmp(rebuilt, units[0], (size_t) len) != 0) {
        fprintf(stderr, "repair produced wrong bytes\n");
        return 1;
    }
    double accs = measure(accum_scratch, len, k, r, g, units, units + k, seconds), accs_cpu = best_cpu;
    double accu = measure(accum_update, len, k, r, g, units, units + k, seconds), accu_cpu = best_cpu;
    printf("c encode        k=%d r=%d unit=%d  %.2f GB/s wall  %.2f GB/s cpu\n", k, r, len, enc, enc_cpu);
    printf("c repair1       k=%d r=%d unit=%d  %.2f GB/s wall  %.2f GB/s cpu\n", k, r, len, rep, rep_cpu);
    printf("c accum-scratch k=%d r=%d unit=%d  %.2f GB/s wall  %.2f GB/s cpu\n", k, r, len, accs, accs_cpu);
    printf("c accum-update  k=%d r=%d unit=%d  %.2f GB/s wall  %.2f GB/s cpu\n", k, r, len, accu, accu_cpu);
    return 0;
}
