package io.hayloft.erasure.kernel.vector;

import io.hayloft.erasure.gf.Gf256;
import io.hayloft.erasure.kernel.AbstractFusedOp;
import io.hayloft.erasure.kernel.PiggybackEncode;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * Hitchhiker's whole encode ({@link PiggybackEncode}) with 4 parity units on the Vector API, in two
 * passes per tile of {@value #DEFAULT_TILE} bytes (the system property {@value #TILE_PROPERTY} overrides
 * it for experiments):
 * <ol>
 *   <li>pass b: {@code Pb = M b} ({@link NibbleLoops#rows4}, as Reed-Solomon);</li>
 *   <li>pass a: {@code Pa = M a} with the data units sorted by piggyback group, each group's piggyback
 *       summed in a register of its own and XORed into {@code Pb_(g+1)} (still in L1) when the group
 *       ends, then the coupling {@code Pa_1 ^= Pb_1} ({@link PiggybackLoops}). When the piggyback
 *       weights are row 1's ({@code w_j = m[1][j]}: nonXOR, and XOR+ whose row 1 is all ones), the
 *       group's register is its share of row 1's products, so the piggybacks cost no multiplication
 *       of their own ({@link PiggybackLoops#rowOneSums}); with weights 1 (XOR) it sums the inputs
 *       ({@link PiggybackLoops#plainSums}).</li>
 * </ol>
 * Every input is read once per tile, and the multiplications are those of Reed-Solomon: the tiled
 * {@link PiggybackEncode#steps()} make each piggyback a product pass of its own (nonXOR multiplies
 * each grouped {@code a_j} by {@code m[1][j]} twice) and the coupling another pass.
 *
 * <p>Heap buffers are used in place; direct and read-only ones are staged per tile through per-thread
 * arrays, as in {@link VectorOp}. The bytes the vector loops leave at the end of a tile (under twice
 * the vector length) are computed with the scalar tables. Immutable and thread-safe.
 */
final class PiggybackVectorOp extends AbstractFusedOp {

    /** Overrides the tile size (bytes, rounded down to a multiple of 128, at least 128) for experiments. */
    static final String TILE_PROPERTY = "hayloft.erasure.vector.piggybackTile";
    static final int DEFAULT_TILE = 4 * 1024;
    static final int TILE = Math.max(128, Integer.getInteger(TILE_PROPERTY, DEFAULT_TILE) & ~127);

    private static final ThreadLocal<byte[][]> STAGING = new ThreadLocal<>();

    private final PiggybackEncode encode;
    private final int k;
    private final int r;
    /** Pass b: the {@code b_j} buffers with a non-zero column, their kinds and tables ({@link NibbleLoops} layout). */
    private final int[] bActive;
    private final byte[] bKinds;
    private final byte[] bTables;
    /** Pass a: the data units in the order of {@link PiggybackLoops} (groups 0, 1, 2, then none), where each group ends, their tables. */
    private final int[] members;
    private final int[] groupEnds;
    private final byte[] tables;
    private final boolean rowOne;

    /** Whether this op can run {@code encode}: 4 parity units. */
    static boolean supports(PiggybackEncode encode) {
        return encode.parityUnits() == 4;
    }

    /** Whether every piggyback weight is row 1's coefficient ({@link PiggybackLoops#rowOneSums} applies). */
    static boolean rowOneWeights(PiggybackEncode encode) {
        for (int j = 0; j < encode.dataUnits(); j++) {
            if (encode.group(j) >= 0 && encode.weight(j) != encode.coefficient(1, j)) {
                return false;
            }
        }
        return true;
    }

    PiggybackVectorOp(PiggybackEncode encode) {
        super(encode.steps());
        if (!supports(encode)) {
            throw new IllegalArgumentException("the vector piggyback loop needs 4 parity units, was " + encode.parityUnits());
        }
        this.encode = encode;
        this.k = encode.dataUnits();
        this.r = encode.parityUnits();
        this.rowOne = rowOneWeights(encode);
        int vl = NibbleLoops.VL;
        int[] active = new int[k];
        byte[] kinds = new byte[k];
        int na = 0;
        for (int j = 0; j < k; j++) {
            boolean any = false;
            boolean mul = false;
            for (int i = 0; i < r; i++) {
                int c = encode.coefficient(i, j);
                any |= c != 0;
                mul |= c > 1;
            }
            if (any) {
                kinds[na] = (byte) (mul ? 1 : 0);
                active[na++] = k + j;
            }
        }
        this.bActive = Arrays.copyOf(active, na);
        this.bKinds = Arrays.copyOf(kinds, na);
        this.bTables = new byte[na * r * 2 * vl];
        for (int a = 0; a < na; a++) {
            for (int i = 0; i < r; i++) {
                int c = encode.coefficient(i, bActive[a] - k);
                int base = (a * r + i) * 2 * vl;
                for (int x = 0; x < vl; x++) {
                    if (bKinds[a] != 0) {
                        bTables[base + x] = (byte) Gf256.mul(c, x & 15);
                        bTables[base + vl + x] = (byte) Gf256.mul(c, (x & 15) << 4);
                    } else {
                        bTables[base + x] = (byte) (c == 1 ? -1 : 0);
                    }
                }
            }
        }
        int[] order = new int[k];
        int[] ends = new int[3];
        int a = 0;
        for (int g = 0; g < 3; g++) {
            for (int j = 0; j < k; j++) {
                if (encode.group(j) == g) {
                    order[a++] = j;
                }
            }
            ends[g] = a;
        }
        for (int j = 0; j < k; j++) {
            if (encode.group(j) < 0) {
                order[a++] = j;
            }
        }
        this.members = order;
        this.groupEnds = ends;
        this.tables = new byte[k * 4 * 2 * vl];
        for (int m = 0; m < k; m++) {
            for (int i = 0; i < 4; i++) {
                int c = encode.coefficient(i, members[m]);
                int base = (m * 4 + i) * 2 * vl;
                for (int x = 0; x < vl; x++) {
                    tables[base + x] = (byte) Gf256.mul(c, x & 15);
                    tables[base + vl + x] = (byte) Gf256.mul(c, (x & 15) << 4);
                }
            }
        }
    }

    private static byte[][] staging(int count) {
        byte[][] s = STAGING.get();
        if (s == null || s.length < count) {
            s = new byte[count][TILE];
            STAGING.set(s);
        }
        return s;
    }

    @Override
    public void apply(ByteBuffer[] b, int len) {
        check(b, len);
        int nb = buffers;
        int inputs = 2 * k;
        byte[][] arr = new byte[nb][];
        int[] off = new int[nb];
        byte[][] stage = null;
        for (int base = 0, n; base < len; base += n) {
            n = Math.min(TILE, len - base); // base + n <= len: no int overflow near 2 GiB
            int staged = 0;
            for (int x = 0; x < nb; x++) {
                ByteBuffer buf = b[x];
                if (buf.hasArray()) {
                    arr[x] = buf.array();
                    off[x] = buf.arrayOffset() + buf.position() + base;
                } else {
                    if (stage == null) {
                        stage = staging(nb);
                    }
                    byte[] s = stage[staged++];
                    if (x < inputs) {
                        buf.get(buf.position() + base, s, 0, n);
                    }
                    arr[x] = s;
                    off[x] = 0;
                }
            }
            int done = passB(arr, off, n);
            int pa = inputs;
            int pb = inputs + 4;
            byte[] pc = encode.coupled() ? arr[pb + 1] : null;
            int e0 = groupEnds[0];
            int e1 = groupEnds[1];
            int e2 = groupEnds[2];
            done = Math.min(done, rowOne
                    ? PiggybackLoops.rowOneSums(arr, off, members, e0, e1, e2, tables,
                            arr[pa], off[pa], arr[pa + 1], off[pa + 1], arr[pa + 2], off[pa + 2], arr[pa + 3], off[pa + 3],
                            arr[pb + 1], off[pb + 1], arr[pb + 2], off[pb + 2], arr[pb + 3], off[pb + 3], pc, off[pb + 1], n)
                    : PiggybackLoops.plainSums(arr, off, members, e0, e1, e2, tables,
                            arr[pa], off[pa], arr[pa + 1], off[pa + 1], arr[pa + 2], off[pa + 2], arr[pa + 3], off[pa + 3],
                            arr[pb + 1], off[pb + 1], arr[pb + 2], off[pb + 2], arr[pb + 3], off[pb + 3], pc, off[pb + 1], n));
            if (done < n) {
                tail(arr, off, done, n);
            }
            for (int x = inputs; x < nb; x++) {
                if (!b[x].hasArray()) {
                    b[x].put(b[x].position() + base, arr[x], 0, n);
                }
            }
        }
    }

    private int passB(byte[][] arr, int[] off, int n) {
        int pb = 2 * k + r;
        return NibbleLoops.rows4(arr, off, bActive, bKinds, bTables, arr[pb], off[pb], arr[pb + 1], off[pb + 1],
                arr[pb + 2], off[pb + 2], arr[pb + 3], off[pb + 3], n, false);
    }

    /** Bytes {@code [from, n)} of every output with the scalar tables, as {@link PiggybackEncode} defines them. */
    private void tail(byte[][] arr, int[] off, int from, int n) {
        int[] pa = new int[r];
        int[] pb = new int[r];
        for (int t = from; t < n; t++) {
            Arrays.fill(pa, 0);
            Arrays.fill(pb, 0);
            for (int j = 0; j < k; j++) {
                int av = arr[j][off[j] + t] & 0xff;
                int bv = arr[k + j][off[k + j] + t] & 0xff;
                for (int i = 0; i < r; i++) {
                    pa[i] ^= Gf256.mul(encode.coefficient(i, j), av);
                    pb[i] ^= Gf256.mul(encode.coefficient(i, j), bv);
                }
                if (encode.group(j) >= 0) {
                    pb[encode.group(j) + 1] ^= Gf256.mul(encode.weight(j), av);
                }
            }
            if (encode.coupled()) {
                pa[1] ^= pb[1];
            }
            for (int i = 0; i < r; i++) {
                arr[2 * k + i][off[2 * k + i] + t] = (byte) pa[i];
                arr[2 * k + r + i][off[2 * k + r + i] + t] = (byte) pb[i];
            }
        }
    }
}
