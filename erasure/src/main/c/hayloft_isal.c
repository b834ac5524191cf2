/*
 * JNI shim between io.hayloft.erasure.kernel.isal.IsalNative and Intel ISA-L's erasure-code
 * functions. Nothing here knows about codes: it applies a prepared GF(2^8) matrix to byte ranges.
 *
 *   newTables(rows, cols, matrix)  malloc + ec_init_tables; returns a handle (0 never returned)
 *   freeTables(handle)             free; the Java side guarantees at most once and no user left
 *   apply(handle, bases, offs, len, accumulate)
 *                                  out[i] (^)= sum_j m[i][j] * in[j] over len bytes; bases holds
 *                                  the inputs then the outputs, each a direct ByteBuffer or a
 *                                  byte[] (flagged in offs; pinned with GetPrimitiveArrayCritical)
 *   applyFused(handles, wiring, bases, offs, len)
 *                                  a sequence of such products over one set of buffers, run a
 *                                  tile at a time (FUSED_TILE) so every step finds its inputs in
 *                                  cache; accumulating steps with one all-ones row are plain XORs
 *   applyPiggyback(affine, shape, bases, offs, len, tile)
 *                                  Hitchhiker's whole encode in one pass (AVX-512 + GFNI, our own
 *                                  loop, not ISA-L): see pb_encode
 *   piggybackSupported()           whether this CPU runs applyPiggyback
 *   invert(matrix, n)              gf_invert_matrix; returns the inverse or null when singular
 *   dispatched()                   the symbol ISA-L's dispatcher chose for ec_encode_data
 *   version()                      the ISA-L version this shim was built against
 *
 * Thread-safety: every function is re-entrant; tables are read-only after newTables.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <jni.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <isa-l.h>
#include <immintrin.h>

#ifndef HAYLOFT_ISAL_VERSION
#define HAYLOFT_ISAL_VERSION "unknown"
#endif

/* Pointers on the stack up to this many buffers per side; more than that is malloc'd. */
#define SMALL 32
/* Accumulate: outputs are computed into scratch tiles of this size, then XORed in. */
#define TILE (32 * 1024)

typedef struct {
    int rows;
    int cols;
    unsigned char tables[]; /* 32 * rows * cols bytes, as ec_init_tables wants */
} hl_tables;

static void throw_new(JNIEnv *env, const char *cls, const char *msg) {
    jclass c = (*env)->FindClass(env, cls);
    if (c != NULL) {
        (*env)->ThrowNew(env, c, msg);
    }
}

JNIEXPORT jlong JNICALL Java_io_hayloft_erasure_kernel_isal_IsalNative_newTables(
        JNIEnv *env, jclass cls, jint rows, jint cols, jbyteArray matrix) {
    (void) cls;
    size_t n = (size_t) rows * (size_t) cols;
    hl_tables *t = malloc(sizeof(hl_tables) + 32 * n);
    if (t == NULL) {
        throw_new(env, "java/lang/OutOfMemoryError", "cannot allocate ISA-L tables");
        return 0;
    }
    t->rows = rows;
    t->cols = cols;
    unsigned char *m = malloc(n);
    if (m == NULL) {
        free(t);
        throw_new(env, "java/lang/OutOfMemoryError", "cannot allocate ISA-L matrix copy");
        return 0;
    }
    (*env)->GetByteArrayRegion(env, matrix, 0, (jsize) n, (jbyte *) m);
    ec_init_tables(cols, rows, m, t->tables);
    free(m);
    return (jlong) (intptr_t) t;
}

JNIEXPORT void JNICALL Java_io_hayloft_erasure_kernel_isal_IsalNative_freeTables(
        JNIEnv *env, jclass cls, jlong handle) {
    (void) env;
    (void) cls;
    free((void *) (intptr_t) handle);
}

/* XOR src into dst; compiled for the widest vector unit present, chosen at load time. */
__attribute__((target_clones("avx512f", "avx2", "default")))
static void xor_into(unsigned char *restrict dst, const unsigned char *restrict src, size_t n) {
    for (size_t i = 0; i < n; i++) {
        dst[i] ^= src[i];
    }
}

static int accumulate(const hl_tables *t, int len, unsigned char **in, unsigned char **out) {
    int rows = t->rows;
    if (len <= 0) {
        return 0;
    }
    size_t tile = (size_t) (len < TILE ? len : TILE);
    unsigned char *scratch = malloc(tile * (size_t) rows);
    if (scratch == NULL) {
        return -1;
    }
    unsigned char *sp[SMALL];
    unsigned char **s = rows <= SMALL ? sp : malloc(sizeof(unsigned char *) * (size_t) rows);
    unsigned char *ip[SMALL];
    unsigned char **x = t->cols <= SMALL ? ip : malloc(sizeof(unsigned char *) * (size_t) t->cols);
    if (s == NULL || x == NULL) {
        free(scratch);
        if (s != sp) free(s);
        if (x != ip) free(x);
        return -1;
    }
    for (int i = 0; i < rows; i++) {
        s[i] = scratch + (size_t) i * tile;
    }
    for (int base = 0; base < len; base += (int) tile) {
        int n = len - base < (int) tile ? len - base : (int) tile;
        for (int j = 0; j < t->cols; j++) {
            x[j] = in[j] + base;
        }
        ec_encode_data(n, t->cols, rows, (unsigned char *) t->tables, x, s);
        for (int i = 0; i < rows; i++) {
            xor_into(out[i] + base, s[i], (size_t) n);
        }
    }
    free(scratch);
    if (s != sp) free(s);
    if (x != ip) free(x);
    return 0;
}

/* Flag in an offset: the base is a byte[] to pin, not a direct buffer (IsalNative.HEAP). */
#define HEAP_FLAG ((jlong) 1 << 62)

/* java.nio.Buffer.address, read directly: GetDirectBufferAddress would also type-check. */
static jfieldID buffer_address;

JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM *vm, void *reserved) {
    (void) reserved;
    JNIEnv *env;
    if ((*vm)->GetEnv(vm, (void **) &env, JNI_VERSION_1_8) != JNI_OK) {
        return JNI_ERR;
    }
    jclass buffer = (*env)->FindClass(env, "java/nio/Buffer");
    if (buffer != NULL) {
        buffer_address = (*env)->GetFieldID(env, buffer, "address", "J");
    }
    if (buffer_address == NULL) {
        (*env)->ExceptionClear(env); /* fall back to GetDirectBufferAddress */
    }
    return JNI_VERSION_1_8;
}

/*
 * bases[i] is a direct ByteBuffer, or a byte[] when offs[i] has HEAP_FLAG. Direct addresses are read
 * first, while JNI calls are still allowed; then the arrays are pinned, after which nothing but more
 * Get/ReleasePrimitiveArrayCritical is called until release_buffers. Returns 0 when an array could
 * not be pinned (release_buffers must still be called).
 */
static int resolve_buffers(JNIEnv *env, jobjectArray bases, jlongArray offsArr, int total,
                           unsigned char **ptr, jobject *pinned, jlong *off) {
    (*env)->GetLongArrayRegion(env, offsArr, 0, total, off);
    for (int i = 0; i < total; i++) {
        jobject o = (*env)->GetObjectArrayElement(env, bases, i);
        if (off[i] & HEAP_FLAG) {
            off[i] &= ~HEAP_FLAG;
            ptr[i] = NULL;
            pinned[i] = o; /* local ref kept until released below */
        } else {
            void *addr = buffer_address != NULL
                    ? (void *) (intptr_t) (*env)->GetLongField(env, o, buffer_address)
                    : (*env)->GetDirectBufferAddress(env, o);
            ptr[i] = (unsigned char *) addr + off[i];
            pinned[i] = NULL;
            (*env)->DeleteLocalRef(env, o);
        }
    }
    int ok = 1;
    for (int i = 0; i < total; i++) {
        if (pinned[i] != NULL) {
            unsigned char *a = (*env)->GetPrimitiveArrayCritical(env, (jarray) pinned[i], NULL);
            ptr[i] = a == NULL ? NULL : a + off[i];
        }
        if (ptr[i] == NULL) {
            ok = 0;
        }
    }
    return ok;
}

/* Unpins in reverse order; readOnly[i] (or i < firstWritten when readOnly is NULL) skips a copy-back. */
static void release_buffers(JNIEnv *env, int total, unsigned char **ptr, jobject *pinned, const jlong *off,
                            int firstWritten, const unsigned char *written) {
    for (int i = total - 1; i >= 0; i--) {
        if (pinned[i] != NULL) {
            if (ptr[i] != NULL) {
                int ro = written != NULL ? !written[i] : i < firstWritten;
                /* Inputs were only read: JNI_ABORT skips a copy-back if the VM had to copy. */
                (*env)->ReleasePrimitiveArrayCritical(env, (jarray) pinned[i], ptr[i] - off[i], ro ? JNI_ABORT : 0);
            }
            (*env)->DeleteLocalRef(env, pinned[i]);
        }
    }
}

/* bases: the cols inputs then the rows outputs (see resolve_buffers). */
JNIEXPORT void JNICALL Java_io_hayloft_erasure_kernel_isal_IsalNative_apply(
        JNIEnv *env, jclass cls, jlong handle, jobjectArray bases, jlongArray offsArr, jint len,
        jboolean acc) {
    (void) cls;
    const hl_tables *t = (const hl_tables *) (intptr_t) handle;
    int k = t->cols, r = t->rows, total = k + r;
    unsigned char *pbuf[2 * SMALL];
    jobject obuf[2 * SMALL];
    jlong lbuf[2 * SMALL];
    int big = total > 2 * SMALL;
    unsigned char **ptr = big ? malloc(sizeof(*ptr) * (size_t) total) : pbuf;
    jobject *pinned = big ? malloc(sizeof(*pinned) * (size_t) total) : obuf;
    jlong *off = big ? malloc(sizeof(*off) * (size_t) total) : lbuf;
    if (ptr == NULL || pinned == NULL || off == NULL) {
        throw_new(env, "java/lang/OutOfMemoryError", "cannot allocate buffer pointer arrays");
        goto done;
    }
    int ok = resolve_buffers(env, bases, offsArr, total, ptr, pinned, off);
    int status = 0;
    if (ok) {
        if (acc) {
            status = accumulate(t, len, ptr, ptr + k);
        } else {
            ec_encode_data(len, k, r, (unsigned char *) t->tables, ptr, ptr + k);
        }
    }
    release_buffers(env, total, ptr, pinned, off, k, NULL);
    if (!ok) {
        throw_new(env, "java/lang/OutOfMemoryError", "cannot pin a heap array");
    } else if (status != 0) {
        throw_new(env, "java/lang/OutOfMemoryError", "cannot allocate accumulate scratch");
    }
done:
    if (big) {
        free(ptr);
        free(pinned);
        free(off);
    }
}

/* dst ^= src[0] ^ ... ^ src[n-1]: one pass over dst whatever the number of sources. */
__attribute__((target_clones("avx512f", "avx2", "default")))
static void xor_sum_into(unsigned char *restrict dst, unsigned char *const *src, int nsrc, size_t n) {
    int s = 0;
    for (; s + 3 <= nsrc; s += 3) {
        const unsigned char *restrict x = src[s], *restrict y = src[s + 1], *restrict z = src[s + 2];
        for (size_t i = 0; i < n; i++) {
            dst[i] ^= x[i] ^ y[i] ^ z[i];
        }
    }
    for (; s < nsrc; s++) {
        const unsigned char *restrict x = src[s];
        for (size_t i = 0; i < n; i++) {
            dst[i] ^= x[i];
        }
    }
}

/*
 * wiring, per step: flags (1 = accumulate, 2 = one all-ones row: a plain XOR, no tables, 4 = an
 * all-zero product that overwrites: the outputs become zero, no inputs, no tables), cols,
 * rows, the cols input indices, the rows output indices. handles[s]: the step's tables (0 for a
 * plain XOR). bases/offs: every buffer (see resolve_buffers). Runs every step on one tile before the
 * next tile; accumulating steps compute into scratch and XOR it in, as accumulate() does.
 */
JNIEXPORT void JNICALL Java_io_hayloft_erasure_kernel_isal_IsalNative_applyFused(
        JNIEnv *env, jclass cls, jlongArray handlesArr, jintArray wiringArr, jobjectArray bases,
        jlongArray offsArr, jint len, jint tileSize) {
    (void) cls;
    int nsteps = (*env)->GetArrayLength(env, handlesArr);
    int nwiring = (*env)->GetArrayLength(env, wiringArr);
    int total = (*env)->GetArrayLength(env, bases);
    jlong *handles = malloc(sizeof(jlong) * (size_t) (nsteps > 0 ? nsteps : 1));
    jint *wiring = malloc(sizeof(jint) * (size_t) (nwiring > 0 ? nwiring : 1));
    unsigned char **ptr = malloc(sizeof(*ptr) * (size_t) total);
    jobject *pinned = malloc(sizeof(*pinned) * (size_t) total);
    jlong *off = malloc(sizeof(*off) * (size_t) total);
    unsigned char *written = calloc((size_t) total, 1);
    unsigned char **x = NULL, **y = NULL, **s = NULL, *scratch = NULL;
    int maxio = 1, maxrows = 0;
    if (handles == NULL || wiring == NULL || ptr == NULL || pinned == NULL || off == NULL || written == NULL) {
        throw_new(env, "java/lang/OutOfMemoryError", "cannot allocate fused-op arrays");
        goto done;
    }
    (*env)->GetLongArrayRegion(env, handlesArr, 0, nsteps, handles);
    (*env)->GetIntArrayRegion(env, wiringArr, 0, nwiring, wiring);
    for (int st = 0, w = 0; st < nsteps; st++) {
        int flags = wiring[w], cols = wiring[w + 1], rows = wiring[w + 2];
        if (cols > maxio) maxio = cols;
        if (rows > maxio) maxio = rows;
        if ((flags & 1) && !(flags & 6) && rows > maxrows) maxrows = rows;
        for (int i = 0; i < rows; i++) {
            written[wiring[w + 3 + cols + i]] = 1;
        }
        w += 3 + cols + rows;
    }
    size_t tile = (size_t) (len < tileSize ? (len > 0 ? len : 1) : tileSize);
    x = malloc(sizeof(*x) * (size_t) maxio);
    y = malloc(sizeof(*y) * (size_t) maxio);
    s = malloc(sizeof(*s) * (size_t) (maxrows > 0 ? maxrows : 1));
    scratch = maxrows > 0 ? malloc(tile * (size_t) maxrows) : NULL;
    if (x == NULL || y == NULL || s == NULL || (maxrows > 0 && scratch == NULL)) {
        throw_new(env, "java/lang/OutOfMemoryError", "cannot allocate fused-op scratch");
        goto done;
    }
    for (int i = 0; i < maxrows; i++) {
        s[i] = scratch + (size_t) i * tile;
    }
    int ok = resolve_buffers(env, bases, offsArr, total, ptr, pinned, off);
    if (ok) {
        for (int base = 0; base < len; base += (int) tile) {
            int n = len - base < (int) tile ? len - base : (int) tile;
            for (int st = 0, w = 0; st < nsteps; st++) {
                int flags = wiring[w], cols = wiring[w + 1], rows = wiring[w + 2];
                const jint *in = wiring + w + 3, *out = in + cols;
                w += 3 + cols + rows;
                for (int j = 0; j < cols; j++) {
                    x[j] = ptr[in[j]] + base;
                }
                for (int i = 0; i < rows; i++) {
                    y[i] = ptr[out[i]] + base;
                }
                if (flags & 4) {
                    for (int i = 0; i < rows; i++) {
                        memset(y[i], 0, (size_t) n);
                    }
                } else if (flags & 2) {
                    xor_sum_into(y[0], x, cols, (size_t) n);
                } else if (flags & 1) {
                    unsigned char *tables = ((hl_tables *) (intptr_t) handles[st])->tables;
                    ec_encode_data(n, cols, rows, tables, x, s);
                    for (int i = 0; i < rows; i++) {
                        xor_into(y[i], s[i], (size_t) n);
                    }
                } else {
                    unsigned char *tables = ((hl_tables *) (intptr_t) handles[st])->tables;
                    ec_encode_data(n, cols, rows, tables, x, y);
                }
            }
        }
    }
    release_buffers(env, total, ptr, pinned, off, 0, written);
    if (!ok) {
        throw_new(env, "java/lang/OutOfMemoryError", "cannot pin a heap array");
    }
done:
    free(handles);
    free(wiring);
    free(ptr);
    free(pinned);
    free(off);
    free(written);
    free(x);
    free(y);
    free(s);
    free(scratch);
}

/*
 * Hitchhiker's piggybacked encode (io.hayloft.erasure.kernel.PiggybackEncode) over k data pieces a_j,
 * b_j and R = 2..4 parity pieces Pa_i, Pb_i:
 *   Pb_i = sum_j m[i][j] b_j (+ the piggyback of group i-1),  Pa_i = sum_j m[i][j] a_j (+ Pb_1 when
 *   coupled, i = 1).
 * A tile of PB_TILE bytes at a time, in two passes of 64-byte vectors: pass b computes Pb from the
 * b_j; pass a computes Pa from the a_j and, as each a_j passes, adds a_j (XOR, XOR+) or the product
 * m[1][j] a_j already computed for Pa_1 (weighted: nonXOR) to a piggyback register, which is XORed
 * into Pb_(g+1) (still in L1) when the run of group g's units ends; then Pa_1 ^= Pb_1. So each input
 * is loaded once, the piggybacks and the coupling need no pass of their own, and each pass streams
 * k inputs and R outputs like an RS product (one pass over all 2k inputs and 2R outputs at once was
 * half as fast at 1 MiB units: too many streams). A product by a constant is one GF2P8AFFINEQB with
 * that constant's 8x8 bit matrix (aff, built by the Java side), which works for our polynomial 0x11D.
 * The last partial vector uses masked loads and stores.
 */
#define PB_TARGET __attribute__((target("avx512f,avx512bw,gfni")))

PB_TARGET static inline __attribute__((always_inline)) void pb_pass_b(
        const int R, int k, const long long *aff, unsigned char **b, unsigned char **pb, size_t t, __mmask64 m) {
    __m512i q[4];
    for (int i = 0; i < R; i++) {
        q[i] = _mm512_setzero_si512();
    }
    for (int j = 0; j < k; j++) {
        __m512i x = _mm512_maskz_loadu_epi8(m, b[j] + t);
        for (int i = 0; i < R; i++) {
            q[i] = _mm512_xor_si512(q[i], _mm512_gf2p8affine_epi64_epi8(x, _mm512_set1_epi64(aff[i * k + j]), 0));
        }
    }
    for (int i = 0; i < R; i++) {
        _mm512_mask_storeu_epi8(pb[i] + t, m, q[i]);
    }
}

PB_TARGET static inline __attribute__((always_inline)) void pb_pass_a(
        const int R, int k, const long long *aff, const jint *grp, int weighted, int coupled,
        unsigned char **a, unsigned char **pa, unsigned char **pb, size_t t, __mmask64 m) {
    __m512i p[4];
    __m512i pg = _mm512_setzero_si512();
    for (int i = 0; i < R; i++) {
        p[i] = _mm512_setzero_si512();
    }
    for (int j = 0; j < k; j++) {
        __m512i x = _mm512_maskz_loadu_epi8(m, a[j] + t);
        __m512i x1 = x;
        for (int i = 0; i < R; i++) {
            __m512i y = _mm512_gf2p8affine_epi64_epi8(x, _mm512_set1_epi64(aff[i * k + j]), 0);
            p[i] = _mm512_xor_si512(p[i], y);
            if (i == 1) {
                x1 = y;
            }
        }
        int g = grp[j];
        if (g >= 0) {
            pg = _mm512_xor_si512(pg, weighted ? x1 : x);
            if (j == k - 1 || grp[j + 1] != g) {
                unsigned char *d = pb[g + 1] + t;
                _mm512_mask_storeu_epi8(d, m, _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, d), pg));
                pg = _mm512_setzero_si512();
            }
        }
    }
    if (coupled) {
        p[1] = _mm512_xor_si512(p[1], _mm512_maskz_loadu_epi8(m, pb[1] + t));
    }
    for (int i = 0; i < R; i++) {
        _mm512_mask_storeu_epi8(pa[i] + t, m, p[i]);
    }
}

PB_TARGET static inline __attribute__((always_inline)) void pb_encode(
        const int R, int k, const long long *aff, const jint *grp, int weighted, int coupled,
        unsigned char **a, unsigned char **b, unsigned char **pa, unsigned char **pb, size_t len, size_t tile) {
    for (size_t base = 0; base < len; base += tile) {
        size_t end = len - base < tile ? len : base + tile;
        size_t t = base;
        for (; t + 64 <= end; t += 64) {
            pb_pass_b(R, k, aff, b, pb, t, ~(__mmask64) 0);
        }
        if (t < end) {
            pb_pass_b(R, k, aff, b, pb, t, ((__mmask64) 1 << (end - t)) - 1);
        }
        t = base;
        for (; t + 64 <= end; t += 64) {
            pb_pass_a(R, k, aff, grp, weighted, coupled, a, pa, pb, t, ~(__mmask64) 0);
        }
        if (t < end) {
            pb_pass_a(R, k, aff, grp, weighted, coupled, a, pa, pb, t, ((__mmask64) 1 << (end - t)) - 1);
        }
    }
}

#define PB_ENCODE_R(R) \
    PB_TARGET static void pb_encode##R(int k, const long long *aff, const jint *grp, int w, int c, unsigned char **a, \
            unsigned char **b, unsigned char **pa, unsigned char **pb, size_t len, size_t tile) { \
        pb_encode(R, k, aff, grp, w, c, a, b, pa, pb, len, tile); \
    }
PB_ENCODE_R(2)
PB_ENCODE_R(3)
PB_ENCODE_R(4)

JNIEXPORT jboolean JNICALL Java_io_hayloft_erasure_kernel_isal_IsalNative_piggybackSupported(
        JNIEnv *env, jclass cls) {
    (void) env;
    (void) cls;
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("gfni")
            ? JNI_TRUE : JNI_FALSE;
}

/*
 * affine: R * k bit matrices, row-major (m[i][j] at i * k + j). shape: k, R, weighted, coupled, then
 * the group of each data unit (-1 for none). bases/offs: a_0..a_(k-1), b_0..b_(k-1), Pa_0..Pa_(R-1),
 * Pb_0..Pb_(R-1) (see resolve_buffers). The Java side checks the shapes and the CPU.
 */
JNIEXPORT void JNICALL Java_io_hayloft_erasure_kernel_isal_IsalNative_applyPiggyback(
        JNIEnv *env, jclass cls, jlongArray affArr, jintArray shapeArr, jobjectArray bases, jlongArray offsArr,
        jint len, jint tileSize) {
    (void) cls;
    int nshape = (*env)->GetArrayLength(env, shapeArr);
    int naff = (*env)->GetArrayLength(env, affArr);
    int total = (*env)->GetArrayLength(env, bases);
    jint *shape = malloc(sizeof(jint) * (size_t) nshape);
    long long *aff = malloc(sizeof(long long) * (size_t) (naff > 0 ? naff : 1));
    unsigned char **ptr = malloc(sizeof(*ptr) * (size_t) total);
    jobject *pinned = malloc(sizeof(*pinned) * (size_t) total);
    jlong *off = malloc(sizeof(*off) * (size_t) total);
    if (shape == NULL || aff == NULL || ptr == NULL || pinned == NULL || off == NULL) {
        throw_new(env, "java/lang/OutOfMemoryError", "cannot allocate piggyback arrays");
        goto done;
    }
    (*env)->GetIntArrayRegion(env, shapeArr, 0, nshape, shape);
    (*env)->GetLongArrayRegion(env, affArr, 0, naff, (jlong *) aff);
    int k = shape[0], r = shape[1], weighted = shape[2], coupled = shape[3];
    const jint *grp = shape + 4;
    size_t tile = tileSize >= 64 ? (size_t) tileSize : 64;
    int ok = resolve_buffers(env, bases, offsArr, total, ptr, pinned, off);
    if (ok && len > 0) {
        unsigned char **a = ptr, **b = ptr + k, **pa = ptr + 2 * k, **pb = ptr + 2 * k + r;
        switch (r) {
            case 2: pb_encode2(k, aff, grp, weighted, coupled, a, b, pa, pb, (size_t) len, tile); break;
            case 3: pb_encode3(k, aff, grp, weighted, coupled, a, b, pa, pb, (size_t) len, tile); break;
            case 4: pb_encode4(k, aff, grp, weighted, coupled, a, b, pa, pb, (size_t) len, tile); break;
            default: break;
        }
    }
    release_buffers(env, total, ptr, pinned, off, 2 * k, NULL);
    if (!ok) {
        throw_new(env, "java/lang/OutOfMemoryError", "cannot pin a heap array");
    }
done:
    free(shape);
    free(aff);
    free(ptr);
    free(pinned);
    free(off);
}

JNIEXPORT jbyteArray JNICALL Java_io_hayloft_erasure_kernel_isal_IsalNative_invert(
        JNIEnv *env, jclass cls, jbyteArray matrix, jint n) {
    (void) cls;
    size_t sz = (size_t) n * (size_t) n;
    unsigned char *a = malloc(sz), *b = malloc(sz);
    jbyteArray result = NULL;
    if (a == NULL || b == NULL) {
        throw_new(env, "java/lang/OutOfMemoryError", "cannot allocate matrix");
    } else {
        (*env)->GetByteArrayRegion(env, matrix, 0, (jsize) sz, (jbyte *) a);
        if (gf_invert_matrix(a, b, n) == 0) {
            result = (*env)->NewByteArray(env, (jsize) sz);
            if (result != NULL) {
                (*env)->SetByteArrayRegion(env, result, 0, (jsize) sz, (jbyte *) b);
            }
        }
    }
    free(a);
    free(b);
    return result;
}

/*
 * ISA-L's multibinary entry points start with an optional endbr64 and "jmp *disp32(%rip)" through
 * a pointer its dispatcher fills on the first call. Reads that pointer after one call and names it
 * with dladdr, e.g. "ec_encode_data_avx512_gfni". Returns what it could learn, never crashes on an
 * unexpected layout.
 */
JNIEXPORT jstring JNICALL Java_io_hayloft_erasure_kernel_isal_IsalNative_dispatched(
        JNIEnv *env, jclass cls) {
    (void) cls;
    unsigned char tbl[32 * 2], c[64], d[64] = {0}, e[64];
    unsigned char coef[2] = {1, 2};
    unsigned char *src[2] = {c, d};
    unsigned char *dst[1] = {e};
    memset(c, 1, sizeof c);
    ec_init_tables(2, 1, coef, tbl);
    ec_encode_data(sizeof c, 2, 1, tbl, src, dst);

    /* Follow "jmp *slot(%rip)" hops: the dispatch pointer, then possibly a PLT entry. */
    const unsigned char *p = (const unsigned char *) (void *) &ec_encode_data;
    char buf[256];
    Dl_info info;
    for (int hop = 0; hop < 4; hop++) {
        const unsigned char *q = p;
        if (q[0] == 0xf3 && q[1] == 0x0f && q[2] == 0x1e && q[3] == 0xfa) {
            q += 4; /* endbr64 */
        }
        if (q[0] == 0xf2) {
            q += 1; /* bnd prefix */
        }
        if (!(q[0] == 0xff && q[1] == 0x25)) {
            break;
        }
        int32_t disp;
        memcpy(&disp, q + 2, 4);
        p = *(const unsigned char *const *) (q + 6 + disp);
        if (dladdr((const void *) p, &info) != 0 && info.dli_sname != NULL
                && (void *) info.dli_saddr == (void *) p) {
            snprintf(buf, sizeof buf, "%s", info.dli_sname);
            return (*env)->NewStringUTF(env, buf);
        }
    }
    if (dladdr((const void *) p, &info) != 0 && info.dli_sname != NULL) {
        snprintf(buf, sizeof buf, "%s+%#lx", info.dli_sname,
                 (unsigned long) ((const char *) p - (const char *) info.dli_saddr));
    } else {
        snprintf(buf, sizeof buf, "unknown");
    }
    return (*env)->NewStringUTF(env, buf);
}

/* The file ISA-L was loaded from (dladdr of ec_encode_data). */
JNIEXPORT jstring JNICALL Java_io_hayloft_erasure_kernel_isal_IsalNative_libraryFile(
        JNIEnv *env, jclass cls) {
    (void) cls;
    Dl_info info;
    if (dladdr((void *) &ec_encode_data, &info) != 0 && info.dli_fname != NULL) {
        return (*env)->NewStringUTF(env, info.dli_fname);
    }
    return (*env)->NewStringUTF(env, "unknown");
}

JNIEXPORT jstring JNICALL Java_io_hayloft_erasure_kernel_isal_IsalNative_version(
        JNIEnv *env, jclass cls) {
    (void) cls;
    return (*env)->NewStringUTF(env, HAYLOFT_ISAL_VERSION);
}
