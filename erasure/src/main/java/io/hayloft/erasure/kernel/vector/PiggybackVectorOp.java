package io.hayloft.erasure.kernel.vector;

import static jdk.incubator.vector.VectorOperators.LSHR;
import static jdk.incubator.vector.VectorOperators.XOR;

import io.hayloft.erasure.gf.Gf256;
import io.hayloft.erasure.kernel.AbstractFusedOp;
import io.hayloft.erasure.kernel.PiggybackEncode;
import java.nio.ByteBuffer;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * Hitchhiker's whole encode with 4 parity units ({@link PiggybackEncode}, {@code r = 4}) in two
 * passes of the Vector API per tile: pass b, {@code Pb = M b} ({@link NibbleLoops#rows4}); pass a
 * ({@link #passA}), the four {@code Pa} accumulators from the {@code a_j}, where each grouped
 * {@code a_j} (for the nonXOR weights {@code m[1][j]}, the product {@code m[1][j] a_j} already
 * computed for {@code Pa_1}) is also XORed into a piggyback register that goes into
 * {@code Pb_(g+1)} (still in cache) when its group's run ends, then {@code Pa_1 ^= Pb_1} (coupling).
 * So every input is read once and the piggybacks and coupling cost a few XORs per vector instead of
 * passes of their own ({@code TiledFusedOp} ran six matrix products per tile). A matrix row of all
 * ones (row 1 of XOR+) is looked up like any other.
 *
 * <p>Both passes run on one tile of {@value #TILE} bytes before the next. Heap buffers are used in
 * place; direct and read-only ones are staged per tile through per-thread arrays, as in
 * {@link VectorOp}. The bytes the vector loops leave at the
 * end of a tile are computed with the scalar tables. Immutable and thread-safe.
 */
final class PiggybackVectorOp extends AbstractFusedOp {

    /** Bytes per buffer per tile; the system property {@code hayloft.erasure.vector.piggybackTile} overrides it for experiments. */
    static final int TILE = Math.max(2 * 64, Integer.getInteger("hayloft.erasure.vector.piggybackTile", 16 * 1024) & ~127);

    private static final ThreadLocal<byte[][]> STAGING = new ThreadLocal<>();

    private final int k;
    /** Per data unit j, rows 0..3: low-nibble table vector then high-nibble table vector. */
    private final byte[] tables;
    private final int[] group;
    private final boolean weighted;
    private final boolean coupled;
    /** Per data unit, the buffer its piggyback goes into: {@code Pb_(g+1)}, or the scratch slot for none. */
    private final int[] target;
    private final PiggybackEncode encode;
    /** Pass b's inputs ({@code b_j = k + j}) and their kinds (all table lookups) for {@link NibbleLoops#rows4}. */
    private final int[] bInputs;
    private final byte[] kinds;

    PiggybackVectorOp(PiggybackEncode encode) {
        super(encode.steps());
        if (encode.parityUnits() != 4) {
            throw new IllegalArgumentException("the vector piggyback loop needs 4 parity units, was " + encode.parityUnits());
        }
        this.encode = encode;
        this.k = encode.dataUnits();
        int vl = NibbleLoops.VL;
        this.tables = new byte[k * 8 * vl];
        this.group = new int[k];
        for (int j = 0; j < k; j++) {
            group[j] = encode.group(j);
            for (int i = 0; i < 4; i++) {
                int c = encode.coefficient(i, j);
                int base = (j * 4 + i) * 2 * vl;
                for (int x = 0; x < vl; x++) {
                    tables[base + x] = (byte) Gf256.mul(c, x & 15);
                    tables[base + vl + x] = (byte) Gf256.mul(c, (x & 15) << 4);
                }
            }
        }
        this.target = new int[k];
        for (int j = 0; j < k; j++) {
            target[j] = group[j] >= 0 ? 2 * k + 5 + group[j] : 2 * k + 8;
        }
        this.bInputs = new int[k];
        this.kinds = new byte[k];
        for (int j = 0; j < k; j++) {
            bInputs[j] = k + j;
            kinds[j] = 1;
        }
        this.weighted = encode.weighted();
        this.coupled = encode.coupled();
    }

    private static byte[][] staging(int count) {
        byte[][] s = STAGING.get();
        if (s == null || s.length < count) {
            s = new byte[Math.max(count, 32)][TILE];
            STAGING.set(s);
        }
        return s;
    }

    @Override
    public void apply(ByteBuffer[] b, int len) {
        check(b, len);
        int nb = buffers;
        int inputs = 2 * k;
        byte[][] arr = new byte[nb + 1][];
        int[] off = new int[nb + 1];
        int tile = TILE; // also for heap buffers: pass a finds the tile's Pb in cache
        byte[][] stage = staging(nb + 1);
        arr[nb] = stage[nb]; // the target of runs in no group
        for (int base = 0, n; base < len; base += n) {
            n = Math.min(tile, len - base);
            int staged = 0;
            for (int x = 0; x < nb; x++) {
                ByteBuffer buf = b[x];
                if (buf.hasArray()) {
                    arr[x] = buf.array();
                    off[x] = buf.arrayOffset() + buf.position() + base;
                } else {
                    byte[] s = stage[staged++];
                    if (x < inputs) {
                        buf.get(buf.position() + base, s, 0, n);
                    }
                    arr[x] = s;
                    off[x] = 0;
                }
            }
            int done = NibbleLoops.rows4(arr, off, bInputs, kinds, tables, arr[inputs + 4], off[inputs + 4],
                    arr[inputs + 5], off[inputs + 5], arr[inputs + 6], off[inputs + 6], arr[inputs + 7], off[inputs + 7],
                    n, false);
            done = Math.min(done, passA(arr, off, k, tables, target, weighted, coupled, n));
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

    /** Bytes {@code [from, n)} with the scalar tables, as {@link PiggybackEncode} defines them. */
    private void tail(byte[][] arr, int[] off, int from, int n) {
        for (int t = from; t < n; t++) {
            int[] pa = new int[4];
            int[] pb = new int[4];
            for (int j = 0; j < k; j++) {
                int av = arr[j][off[j] + t] & 0xff;
                int bv = arr[k + j][off[k + j] + t] & 0xff;
                for (int i = 0; i < 4; i++) {
                    pa[i] ^= Gf256.mul(encode.coefficient(i, j), av);
                    pb[i] ^= Gf256.mul(encode.coefficient(i, j), bv);
                }
                if (group[j] >= 0) {
                    pb[group[j] + 1] ^= Gf256.mul(encode.weight(j), av);
                }
            }
            if (coupled) {
                pa[1] ^= pb[1];
            }
            for (int i = 0; i < 4; i++) {
                arr[2 * k + i][off[2 * k + i] + t] = (byte) pa[i];
                arr[2 * k + 4 + i][off[2 * k + 4 + i] + t] = (byte) pb[i];
            }
        }
    }

    /**
     * Pass a over {@code [0, n)}, after pass b ({@link NibbleLoops#rows4}) has written {@code Pb}: the
     * four {@code Pa} accumulators from the {@code a_j}; each {@code a_j} (or, when {@code weighted},
     * its row-1 product, computed once for {@code Pa_1} and the piggyback) is XORed into its target
     * {@code Pb_(g+1)} (in L1: the tile's Pb was just written; units in no group target a scratch
     * array). Then {@code Pa_1 ^= Pb_1}. Returns how many bytes it did (a multiple of twice the vector
     * length).
     *
     * <p>One method holding every vector, so C2 keeps them in registers (see {@link VectorKernel}), and
     * no branch that picks between vectors: the weighted choice is a mask, {@code v = x ^ ((x ^ x1) &
     * w)}, and no inner loop: a version that kept the piggyback in a register over runs of a group
     * (a nested loop, and branches merging vectors) ran at half the speed of RS.
     */
    static int passA(byte[][] arr, int[] off, int k, byte[] tab, int[] target, boolean weighted, boolean coupled, int n) {
        final VectorSpecies<Byte> s = NibbleLoops.SPECIES;
        final int vl = NibbleLoops.VL;
        final ByteVector low = ByteVector.broadcast(s, (byte) 0x0f);
        final ByteVector zero = ByteVector.zero(s);
        final ByteVector w = ByteVector.broadcast(s, (byte) (weighted ? -1 : 0));
        final byte[] pa0 = arr[2 * k];
        final byte[] pa1 = arr[2 * k + 1];
        final byte[] pa2 = arr[2 * k + 2];
        final byte[] pa3 = arr[2 * k + 3];
        final byte[] pb1 = arr[2 * k + 5];
        final int oa0 = off[2 * k];
        final int oa1 = off[2 * k + 1];
        final int oa2 = off[2 * k + 2];
        final int oa3 = off[2 * k + 3];
        final int ob1 = off[2 * k + 5];
        final ByteVector cm = ByteVector.broadcast(s, (byte) (coupled ? -1 : 0));
        int t = 0;
        for (; t <= n - 2 * vl; t += 2 * vl) {
            ByteVector a0 = zero, a1 = zero, a2 = zero, a3 = zero, c0 = zero, c1 = zero, c2 = zero, c3 = zero;
            for (int j = 0, tp = 0; j < k; j++, tp += 8 * vl) {
                byte[] src = arr[j];
                int p = off[j] + t;
                ByteVector x = ByteVector.fromArray(s, src, p);
                ByteVector y = ByteVector.fromArray(s, src, p + vl);
                ByteVector xl = x.and(low);
                ByteVector yl = y.and(low);
                ByteVector xh = x.reinterpretAsLongs().lanewise(LSHR, 4).reinterpretAsBytes().and(low);
                ByteVector yh = y.reinterpretAsLongs().lanewise(LSHR, 4).reinterpretAsBytes().and(low);
                ByteVector lo = ByteVector.fromArray(s, tab, tp);
                ByteVector hi = ByteVector.fromArray(s, tab, tp + vl);
                a0 = a0.lanewise(XOR, xl.selectFrom(lo)).lanewise(XOR, xh.selectFrom(hi));
                c0 = c0.lanewise(XOR, yl.selectFrom(lo)).lanewise(XOR, yh.selectFrom(hi));
                lo = ByteVector.fromArray(s, tab, tp + 2 * vl);
                hi = ByteVector.fromArray(s, tab, tp + 3 * vl);
                ByteVector x1 = xl.selectFrom(lo).lanewise(XOR, xh.selectFrom(hi));
                ByteVector y1 = yl.selectFrom(lo).lanewise(XOR, yh.selectFrom(hi));
                a1 = a1.lanewise(XOR, x1);
                c1 = c1.lanewise(XOR, y1);
                byte[] d = arr[target[j]];
                int q = off[target[j]] + t;
                ByteVector.fromArray(s, d, q).lanewise(XOR, x).lanewise(XOR, x.lanewise(XOR, x1).and(w)).intoArray(d, q);
                ByteVector.fromArray(s, d, q + vl).lanewise(XOR, y).lanewise(XOR, y.lanewise(XOR, y1).and(w)).intoArray(d, q + vl);
                lo = ByteVector.fromArray(s, tab, tp + 4 * vl);
                hi = ByteVector.fromArray(s, tab, tp + 5 * vl);
                a2 = a2.lanewise(XOR, xl.selectFrom(lo)).lanewise(XOR, xh.selectFrom(hi));
                c2 = c2.lanewise(XOR, yl.selectFrom(lo)).lanewise(XOR, yh.selectFrom(hi));
                lo = ByteVector.fromArray(s, tab, tp + 6 * vl);
                hi = ByteVector.fromArray(s, tab, tp + 7 * vl);
                a3 = a3.lanewise(XOR, xl.selectFrom(lo)).lanewise(XOR, xh.selectFrom(hi));
                c3 = c3.lanewise(XOR, yl.selectFrom(lo)).lanewise(XOR, yh.selectFrom(hi));
            }
            a1 = a1.lanewise(XOR, ByteVector.fromArray(s, pb1, ob1 + t).and(cm));
            c1 = c1.lanewise(XOR, ByteVector.fromArray(s, pb1, ob1 + t + vl).and(cm));
            a0.intoArray(pa0, oa0 + t);
            a1.intoArray(pa1, oa1 + t);
            a2.intoArray(pa2, oa2 + t);
            a3.intoArray(pa3, oa3 + t);
            c0.intoArray(pa0, oa0 + t + vl);
            c1.intoArray(pa1, oa1 + t + vl);
            c2.intoArray(pa2, oa2 + t + vl);
            c3.intoArray(pa3, oa3 + t + vl);
        }
        return t;
    }
}
