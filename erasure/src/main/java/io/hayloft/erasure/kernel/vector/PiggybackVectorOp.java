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
 * Hitchhiker's whole encode with 4 parity units ({@link PiggybackEncode}, {@code r = 4}) as one loop
 * of the Vector API: for each vector position the {@code b} inputs are folded into the four
 * {@code Pb} accumulators, then the {@code a} inputs into the four {@code Pa} accumulators, and each
 * {@code a_j} of a piggyback group is XORed into its {@code Pb} accumulator as it passes (for the
 * nonXOR weights {@code m[1][j]}, the product {@code m[1][j] a_j} already computed for {@code Pa_1}),
 * then {@code Pa_1 ^= Pb_1} (coupling) and the eight outputs are stored once. So every input is read
 * once, every output written once, and the piggybacks and coupling cost one XOR each per vector
 * instead of separate passes over the tile ({@code TiledFusedOp} ran six matrix products per tile).
 * A matrix row of all ones (row 1 of XOR+) is an XOR instead of a lookup.
 *
 * <p>Heap buffers are used in place; direct and read-only ones are staged per tile of {@value #TILE}
 * bytes through per-thread arrays, as in {@link VectorOp}. The bytes the vector loops leave at the
 * end of a tile are computed with the scalar tables. Immutable and thread-safe.
 */
final class PiggybackVectorOp extends AbstractFusedOp {

    static final int TILE = 16 * 1024;

    private static final ThreadLocal<byte[][]> STAGING = new ThreadLocal<>();

    private final int k;
    /** Per data unit j, rows 0..3: low-nibble table vector then high-nibble table vector. */
    private final byte[] tables;
    private final int[] group;
    private final boolean weighted;
    private final boolean coupled;
    private final boolean ones1;
    private final PiggybackEncode encode;

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
        boolean allOnes = true;
        for (int j = 0; j < k; j++) {
            group[j] = encode.group(j);
            allOnes &= encode.coefficient(1, j) == 1;
            for (int i = 0; i < 4; i++) {
                int c = encode.coefficient(i, j);
                int base = (j * 4 + i) * 2 * vl;
                for (int x = 0; x < vl; x++) {
                    tables[base + x] = (byte) Gf256.mul(c, x & 15);
                    tables[base + vl + x] = (byte) Gf256.mul(c, (x & 15) << 4);
                }
            }
        }
        this.ones1 = allOnes;
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
        byte[][] arr = new byte[nb][];
        int[] off = new int[nb];
        boolean direct = false;
        for (ByteBuffer x : b) {
            direct |= !x.hasArray();
        }
        int tile = direct ? TILE : Math.max(len, 1);
        byte[][] stage = direct ? staging(nb) : null;
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
            int done = loop(arr, off, k, tables, group, weighted, coupled, ones1, n);
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
     * The vector loop over {@code [0, n)}; returns how many bytes it did (a multiple of the vector
     * length). One method holding every vector, so C2 keeps them in registers (see
     * {@link VectorKernel}).
     */
    static int loop(byte[][] arr, int[] off, int k, byte[] tab, int[] group, boolean weighted, boolean coupled,
                    boolean ones1, int n) {
        final VectorSpecies<Byte> s = NibbleLoops.SPECIES;
        final int vl = NibbleLoops.VL;
        final ByteVector low = ByteVector.broadcast(s, (byte) 0x0f);
        final ByteVector zero = ByteVector.zero(s);
        final byte[] pa0 = arr[2 * k];
        final byte[] pa1 = arr[2 * k + 1];
        final byte[] pa2 = arr[2 * k + 2];
        final byte[] pa3 = arr[2 * k + 3];
        final byte[] pb0 = arr[2 * k + 4];
        final byte[] pb1 = arr[2 * k + 5];
        final byte[] pb2 = arr[2 * k + 6];
        final byte[] pb3 = arr[2 * k + 7];
        final int oa0 = off[2 * k];
        final int oa1 = off[2 * k + 1];
        final int oa2 = off[2 * k + 2];
        final int oa3 = off[2 * k + 3];
        final int ob0 = off[2 * k + 4];
        final int ob1 = off[2 * k + 5];
        final int ob2 = off[2 * k + 6];
        final int ob3 = off[2 * k + 7];
        int t = 0;
        for (; t <= n - 2 * vl; t += 2 * vl) {
            ByteVector q0 = zero, q1 = zero, q2 = zero, q3 = zero, r0 = zero, r1 = zero, r2 = zero, r3 = zero;
            for (int j = 0, tp = 0; j < k; j++, tp += 8 * vl) {
                byte[] src = arr[k + j];
                int p = off[k + j] + t;
                ByteVector x = ByteVector.fromArray(s, src, p);
                ByteVector y = ByteVector.fromArray(s, src, p + vl);
                ByteVector xl = x.and(low);
                ByteVector yl = y.and(low);
                ByteVector xh = x.reinterpretAsLongs().lanewise(LSHR, 4).reinterpretAsBytes().and(low);
                ByteVector yh = y.reinterpretAsLongs().lanewise(LSHR, 4).reinterpretAsBytes().and(low);
                ByteVector lo = ByteVector.fromArray(s, tab, tp);
                ByteVector hi = ByteVector.fromArray(s, tab, tp + vl);
                q0 = q0.lanewise(XOR, xl.selectFrom(lo)).lanewise(XOR, xh.selectFrom(hi));
                r0 = r0.lanewise(XOR, yl.selectFrom(lo)).lanewise(XOR, yh.selectFrom(hi));
                if (ones1) {
                    q1 = q1.lanewise(XOR, x);
                    r1 = r1.lanewise(XOR, y);
                } else {
                    lo = ByteVector.fromArray(s, tab, tp + 2 * vl);
                    hi = ByteVector.fromArray(s, tab, tp + 3 * vl);
                    q1 = q1.lanewise(XOR, xl.selectFrom(lo)).lanewise(XOR, xh.selectFrom(hi));
                    r1 = r1.lanewise(XOR, yl.selectFrom(lo)).lanewise(XOR, yh.selectFrom(hi));
                }
                lo = ByteVector.fromArray(s, tab, tp + 4 * vl);
                hi = ByteVector.fromArray(s, tab, tp + 5 * vl);
                q2 = q2.lanewise(XOR, xl.selectFrom(lo)).lanewise(XOR, xh.selectFrom(hi));
                r2 = r2.lanewise(XOR, yl.selectFrom(lo)).lanewise(XOR, yh.selectFrom(hi));
                lo = ByteVector.fromArray(s, tab, tp + 6 * vl);
                hi = ByteVector.fromArray(s, tab, tp + 7 * vl);
                q3 = q3.lanewise(XOR, xl.selectFrom(lo)).lanewise(XOR, xh.selectFrom(hi));
                r3 = r3.lanewise(XOR, yl.selectFrom(lo)).lanewise(XOR, yh.selectFrom(hi));
            }
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
                ByteVector x1;
                ByteVector y1;
                if (ones1) {
                    x1 = x;
                    y1 = y;
                } else {
                    lo = ByteVector.fromArray(s, tab, tp + 2 * vl);
                    hi = ByteVector.fromArray(s, tab, tp + 3 * vl);
                    x1 = xl.selectFrom(lo).lanewise(XOR, xh.selectFrom(hi));
                    y1 = yl.selectFrom(lo).lanewise(XOR, yh.selectFrom(hi));
                }
                a1 = a1.lanewise(XOR, x1);
                c1 = c1.lanewise(XOR, y1);
                lo = ByteVector.fromArray(s, tab, tp + 4 * vl);
                hi = ByteVector.fromArray(s, tab, tp + 5 * vl);
                a2 = a2.lanewise(XOR, xl.selectFrom(lo)).lanewise(XOR, xh.selectFrom(hi));
                c2 = c2.lanewise(XOR, yl.selectFrom(lo)).lanewise(XOR, yh.selectFrom(hi));
                lo = ByteVector.fromArray(s, tab, tp + 6 * vl);
                hi = ByteVector.fromArray(s, tab, tp + 7 * vl);
                a3 = a3.lanewise(XOR, xl.selectFrom(lo)).lanewise(XOR, xh.selectFrom(hi));
                c3 = c3.lanewise(XOR, yl.selectFrom(lo)).lanewise(XOR, yh.selectFrom(hi));
                int g = group[j];
                if (g >= 0) {
                    ByteVector px = weighted ? x1 : x;
                    ByteVector py = weighted ? y1 : y;
                    if (g == 0) {
                        q1 = q1.lanewise(XOR, px);
                        r1 = r1.lanewise(XOR, py);
                    } else if (g == 1) {
                        q2 = q2.lanewise(XOR, px);
                        r2 = r2.lanewise(XOR, py);
                    } else {
                        q3 = q3.lanewise(XOR, px);
                        r3 = r3.lanewise(XOR, py);
                    }
                }
            }
            if (coupled) {
                a1 = a1.lanewise(XOR, q1);
                c1 = c1.lanewise(XOR, r1);
            }
            a0.intoArray(pa0, oa0 + t);
            a1.intoArray(pa1, oa1 + t);
            a2.intoArray(pa2, oa2 + t);
            a3.intoArray(pa3, oa3 + t);
            q0.intoArray(pb0, ob0 + t);
            q1.intoArray(pb1, ob1 + t);
            q2.intoArray(pb2, ob2 + t);
            q3.intoArray(pb3, ob3 + t);
            c0.intoArray(pa0, oa0 + t + vl);
            c1.intoArray(pa1, oa1 + t + vl);
            c2.intoArray(pa2, oa2 + t + vl);
            c3.intoArray(pa3, oa3 + t + vl);
            r0.intoArray(pb0, ob0 + t + vl);
            r1.intoArray(pb1, ob1 + t + vl);
            r2.intoArray(pb2, ob2 + t + vl);
            r3.intoArray(pb3, ob3 + t + vl);
        }
        return t;
    }
}
