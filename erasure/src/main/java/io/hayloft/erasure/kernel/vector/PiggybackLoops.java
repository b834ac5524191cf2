package io.hayloft.erasure.kernel.vector;

import static jdk.incubator.vector.VectorOperators.LSHR;
import static jdk.incubator.vector.VectorOperators.XOR;

import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * Pass a of {@link PiggybackVectorOp}: {@code Pa = M a} for 4 parity rows with the three piggybacks
 * {@code Pb_(g+1) ^= pi_g(a)} and the coupling {@code Pa_1 ^= Pb_1} folded in, over heap arrays, in
 * the loop order of {@link NibbleLoops#rows4} (every input vector loaded once and folded into every
 * accumulator, each output stored once) with the data units sorted by group: for each pair of vectors,
 * one inner loop over the members of group 0, one over group 1, one over group 2, one over the units
 * in no group, in sequence. Each group's loop sums its piggyback in a register of its own, which is
 * XORed into {@code Pb_(g+1)} (written by pass b, in L1) when the group's loop ends:
 * <ul>
 *   <li>{@link #rowOneSums} (nonXOR, and XOR+ whose row 1 is all ones): the piggyback is the group's
 *       share of row 1, {@code sum m[1][j] a_j}, so row 1's products go into the group's register, which
 *       is then added to {@code Pa_1} too: no multiplication beyond {@code M a};</li>
 *   <li>{@link #plainSums} (XOR): the piggyback is {@code sum a_j}, one XOR per input vector.</li>
 * </ul>
 * The last step adds {@code Pb_1} (final by then: group 0's loop has run) to {@code Pa_1} when
 * {@code pc} is not null.
 *
 * <p>Sequential inner loops, not a loop over groups around a loop over members: C2 keeps the vectors
 * of this shape in registers, while the nested shape ran at a third of the speed (boxed vectors).
 * Table layout: for member {@code a}, row {@code i} has its low-nibble table at vector
 * {@code (a * 4 + i) * 2} and its high-nibble table at the vector after it (as {@link NibbleLoops}),
 * always lookups. Each loop does two vectors per step (whatever the unroll variant) and returns how
 * many bytes it did, a multiple of twice the vector length; the caller finishes the tail with scalar
 * code. Stateless and thread-safe.
 */
final class PiggybackLoops {

    private PiggybackLoops() {
    }

    /**
     * Groups as consecutive members {@code [0, e0), [e0, e1), [e1, e2)}, units in no group
     * {@code [e2, members.length)}; piggyback weights {@code m[1][j]}. Outputs {@code Pa_0..Pa_3} at
     * {@code pa*}/{@code qa*} (overwritten), {@code Pb_1..Pb_3} at {@code pb*}/{@code qb*}
     * (accumulated), the coupling input {@code Pb_1} at {@code pc}/{@code qc} or null.
     */
    static int rowOneSums(byte[][] in, int[] inOff, int[] members, int e0, int e1, int e2, byte[] tab,
                      byte[] pa0, int qa0, byte[] pa1, int qa1, byte[] pa2, int qa2, byte[] pa3, int qa3,
                      byte[] pb1, int qb1, byte[] pb2, int qb2, byte[] pb3, int qb3, byte[] pc, int qc, int n) {
        final VectorSpecies<Byte> s = NibbleLoops.SPECIES;
        final int vl = NibbleLoops.VL;
        final int na = members.length;
        final ByteVector low = ByteVector.broadcast(s, (byte) 0x0f);
        final ByteVector zero = ByteVector.zero(s);
        int t = 0;
        for (; t <= n - 2 * vl; t += 2 * vl) {
            ByteVector a0 = zero, a1 = zero, a2 = zero, a3 = zero, b0 = zero, b1 = zero, b2 = zero, b3 = zero;
            ByteVector u;
            ByteVector v;
            int a = 0;
            int tp = 0;
            u = zero;
            v = zero;
            for (; a < e0; a++, tp += 8 * vl) {
                int j = members[a];
                byte[] src = in[j];
                int p = inOff[j] + t;
                ByteVector x = ByteVector.fromArray(s, src, p);
                ByteVector y = ByteVector.fromArray(s, src, p + vl);
                ByteVector xl = x.and(low);
                ByteVector yl = y.and(low);
                ByteVector xh = x.reinterpretAsLongs().lanewise(LSHR, 4).reinterpretAsBytes().and(low);
                ByteVector yh = y.reinterpretAsLongs().lanewise(LSHR, 4).reinterpretAsBytes().and(low);
                ByteVector lo = ByteVector.fromArray(s, tab, tp);
                ByteVector hi = ByteVector.fromArray(s, tab, tp + vl);
                a0 = a0.lanewise(XOR, xl.selectFrom(lo)).lanewise(XOR, xh.selectFrom(hi));
                b0 = b0.lanewise(XOR, yl.selectFrom(lo)).lanewise(XOR, yh.selectFrom(hi));
                lo = ByteVector.fromArray(s, tab, tp + 2 * vl);
                hi = ByteVector.fromArray(s, tab, tp + 3 * vl);
                u = u.lanewise(XOR, xl.selectFrom(lo)).lanewise(XOR, xh.selectFrom(hi));
                v = v.lanewise(XOR, yl.selectFrom(lo)).lanewise(XOR, yh.selectFrom(hi));
                lo = ByteVector.fromArray(s, tab, tp + 4 * vl);
                hi = ByteVector.fromArray(s, tab, tp + 5 * vl);
                a2 = a2.lanewise(XOR, xl.selectFrom(lo)).lanewise(XOR, xh.selectFrom(hi));
                b2 = b2.lanewise(XOR, yl.selectFrom(lo)).lanewise(XOR, yh.selectFrom(hi));
                lo = ByteVector.fromArray(s, tab, tp + 6 * vl);
                hi = ByteVector.fromArray(s, tab, tp + 7 * vl);
                a3 = a3.lanewise(XOR, xl.selectFrom(lo)).lanewise(XOR, xh.selectFrom(hi));
                b3 = b3.lanewise(XOR, yl.selectFrom(lo)).lanewise(XOR, yh.selectFrom(hi));
            }
            ByteVector.fromArray(s, pb1, qb1 + t).lanewise(XOR, u).intoArray(pb1, qb1 + t);
            ByteVector.fromArray(s, pb1, qb1 + t + vl).lanewise(XOR, v).intoArray(pb1, qb1 + t + vl);
            a1 = a1.lanewise(XOR, u);
            b1 = b1.lanewise(XOR, v);
            u = zero;
            v = zero;
            for (; a < e1; a++, tp += 8 * vl) {
                int j = members[a];
                byte[] src = in[j];
                int p = inOff[j] + t;
                ByteVector x = ByteVector.fromArray(s, src, p);
                ByteVector y = ByteVector.fromArray(s, src, p + vl);
                ByteVector xl = x.and(low);
                ByteVector yl = y.and(low);
                ByteVector xh = x.reinterpretAsLongs().lanewise(LSHR, 4).reinterpretAsBytes().and(low);
                ByteVector yh = y.reinterpretAsLongs().lanewise(LSHR, 4).reinterpretAsBytes().and(low);
                ByteVector lo = ByteVector.fromArray(s, tab, tp);
                ByteVector hi = ByteVector.fromArray(s, tab, tp + vl);
                a0 = a0.lanewise(XOR, xl.selectFrom(lo)).lanewise(XOR, xh.selectFrom(hi));
                b0 = b0.lanewise(XOR, yl.selectFrom(lo)).lanewise(XOR, yh.selectFrom(hi));
                lo = ByteVector.fromArray(s, tab, tp + 2 * vl);
                hi = ByteVector.fromArray(s, tab, tp + 3 * vl);
                u = u.lanewise(XOR, xl.selectFrom(lo)).lanewise(XOR, xh.selectFrom(hi));
                v = v.lanewise(XOR, yl.selectFrom(lo)).lanewise(XOR, yh.selectFrom(hi));
                lo = ByteVector.fromArray(s, tab, tp + 4 * vl);
                hi = ByteVector.fromArray(s, tab, tp + 5 * vl);
                a2 = a2.lanewise(XOR, xl.selectFrom(lo)).lanewise(XOR, xh.selectFrom(hi));
                b2 = b2.lanewise(XOR, yl.selectFrom(lo)).lanewise(XOR, yh.selectFrom(hi));
                lo = ByteVector.fromArray(s, tab, tp + 6 * vl);
                hi = ByteVector.fromArray(s, tab, tp + 7 * vl);
                a3 = a3.lanewise(XOR, xl.selectFrom(lo)).lanewise(XOR, xh.selectFrom(hi));
                b3 = b3.lanewise(XOR, yl.selectFrom(lo)).lanewise(XOR, yh.selectFrom(hi));
            }
            ByteVector.fromArray(s, pb2, qb2 + t).lanewise(XOR, u).intoArray(pb2, qb2 + t);
            ByteVector.fromArray(s, pb2, qb2 + t + vl).lanewise(XOR, v).intoArray(pb2, qb2 + t + vl);
            a1 = a1.lanewise(XOR, u);
            b1 = b1.lanewise(XOR, v);
            u = zero;
            v = zero;
            for (; a < e2; a++, tp += 8 * vl) {
                int j = members[a];
                byte[] src = in[j];
                int p = inOff[j] + t;
                ByteVector x = ByteVector.fromArray(s, src, p);
                ByteVector y = ByteVector.fromArray(s, src, p + vl);
                ByteVector xl = x.and(low);
                ByteVector yl = y.and(low);
                ByteVector xh = x.reinterpretAsLongs().lanewise(LSHR, 4).reinterpretAsBytes().and(low);
                ByteVector yh = y.reinterpretAsLongs().lanewise(LSHR, 4).reinterpretAsBytes().and(low);
                ByteVector lo = ByteVector.fromArray(s, tab, tp);
                ByteVector hi = ByteVector.fromArray(s, tab, tp + vl);
                a0 = a0.lanewise(XOR, xl.selectFrom(lo)).lanewise(XOR, xh.selectFrom(hi));
                b0 = b0.lanewise(XOR, yl.selectFrom(lo)).lanewise(XOR, yh.selectFrom(hi));
                lo = ByteVector.fromArray(s, tab, tp + 2 * vl);
                hi = ByteVector.fromArray(s, tab, tp + 3 * vl);
                u = u.lanewise(XOR, xl.selectFrom(lo)).lanewise(XOR, xh.selectFrom(hi));
                v = v.lanewise(XOR, yl.selectFrom(lo)).lanewise(XOR, yh.selectFrom(hi));
                lo = ByteVector.fromArray(s, tab, tp + 4 * vl);
                hi = ByteVector.fromArray(s, tab, tp + 5 * vl);
                a2 = a2.lanewise(XOR, xl.selectFrom(lo)).lanewise(XOR, xh.selectFrom(hi));
                b2 = b2.lanewise(XOR, yl.selectFrom(lo)).lanewise(XOR, yh.selectFrom(hi));
                lo = ByteVector.fromArray(s, tab, tp + 6 * vl);
                hi = ByteVector.fromArray(s, tab, tp + 7 * vl);
                a3 = a3.lanewise(XOR, xl.selectFrom(lo)).lanewise(XOR, xh.selectFrom(hi));
                b3 = b3.lanewise(XOR, yl.selectFrom(lo)).lanewise(XOR, yh.selectFrom(hi));
            }
            ByteVector.fromArray(s, pb3, qb3 + t).lanewise(XOR, u).intoArray(pb3, qb3 + t);
            ByteVector.fromArray(s, pb3, qb3 + t + vl).lanewise(XOR, v).intoArray(pb3, qb3 + t + vl);
            a1 = a1.lanewise(XOR, u);
            b1 = b1.lanewise(XOR, v);
            for (; a < na; a++, tp += 8 * vl) {
                int j = members[a];
                byte[] src = in[j];
                int p = inOff[j] + t;
                ByteVector x = ByteVector.fromArray(s, src, p);
                ByteVector y = ByteVector.fromArray(s, src, p + vl);
                ByteVector xl = x.and(low);
                ByteVector yl = y.and(low);
                ByteVector xh = x.reinterpretAsLongs().lanewise(LSHR, 4).reinterpretAsBytes().and(low);
                ByteVector yh = y.reinterpretAsLongs().lanewise(LSHR, 4).reinterpretAsBytes().and(low);
                ByteVector lo = ByteVector.fromArray(s, tab, tp);
                ByteVector hi = ByteVector.fromArray(s, tab, tp + vl);
                a0 = a0.lanewise(XOR, xl.selectFrom(lo)).lanewise(XOR, xh.selectFrom(hi));
                b0 = b0.lanewise(XOR, yl.selectFrom(lo)).lanewise(XOR, yh.selectFrom(hi));
                lo = ByteVector.fromArray(s, tab, tp + 2 * vl);
                hi = ByteVector.fromArray(s, tab, tp + 3 * vl);
                a1 = a1.lanewise(XOR, xl.selectFrom(lo)).lanewise(XOR, xh.selectFrom(hi));
                b1 = b1.lanewise(XOR, yl.selectFrom(lo)).lanewise(XOR, yh.selectFrom(hi));
                lo = ByteVector.fromArray(s, tab, tp + 4 * vl);
                hi = ByteVector.fromArray(s, tab, tp + 5 * vl);
                a2 = a2.lanewise(XOR, xl.selectFrom(lo)).lanewise(XOR, xh.selectFrom(hi));
                b2 = b2.lanewise(XOR, yl.selectFrom(lo)).lanewise(XOR, yh.selectFrom(hi));
                lo = ByteVector.fromArray(s, tab, tp + 6 * vl);
                hi = ByteVector.fromArray(s, tab, tp + 7 * vl);
                a3 = a3.lanewise(XOR, xl.selectFrom(lo)).lanewise(XOR, xh.selectFrom(hi));
                b3 = b3.lanewise(XOR, yl.selectFrom(lo)).lanewise(XOR, yh.selectFrom(hi));
            }
            if (pc != null) {
                a1 = a1.lanewise(XOR, ByteVector.fromArray(s, pc, qc + t));
                b1 = b1.lanewise(XOR, ByteVector.fromArray(s, pc, qc + t + vl));
            }
            a0.intoArray(pa0, qa0 + t);
            a1.intoArray(pa1, qa1 + t);
            a2.intoArray(pa2, qa2 + t);
            a3.intoArray(pa3, qa3 + t);
            b0.intoArray(pa0, qa0 + t + vl);
            b1.intoArray(pa1, qa1 + t + vl);
            b2.intoArray(pa2, qa2 + t + vl);
            b3.intoArray(pa3, qa3 + t + vl);
        }
        return t;
    }

    /**
     * As {@link #rowOneSums}, with piggyback weights 1: each group's register sums its inputs as they are.
     */
    static int plainSums(byte[][] in, int[] inOff, int[] members, int e0, int e1, int e2, byte[] tab,
                      byte[] pa0, int qa0, byte[] pa1, int qa1, byte[] pa2, int qa2, byte[] pa3, int qa3,
                      byte[] pb1, int qb1, byte[] pb2, int qb2, byte[] pb3, int qb3, byte[] pc, int qc, int n) {
        final VectorSpecies<Byte> s = NibbleLoops.SPECIES;
        final int vl = NibbleLoops.VL;
        final int na = members.length;
        final ByteVector low = ByteVector.broadcast(s, (byte) 0x0f);
        final ByteVector zero = ByteVector.zero(s);
        int t = 0;
        for (; t <= n - 2 * vl; t += 2 * vl) {
            ByteVector a0 = zero, a1 = zero, a2 = zero, a3 = zero, b0 = zero, b1 = zero, b2 = zero, b3 = zero;
            ByteVector u;
            ByteVector v;
            int a = 0;
            int tp = 0;
            u = zero;
            v = zero;
            for (; a < e0; a++, tp += 8 * vl) {
                int j = members[a];
                byte[] src = in[j];
                int p = inOff[j] + t;
                ByteVector x = ByteVector.fromArray(s, src, p);
                ByteVector y = ByteVector.fromArray(s, src, p + vl);
                ByteVector xl = x.and(low);
                ByteVector yl = y.and(low);
                ByteVector xh = x.reinterpretAsLongs().lanewise(LSHR, 4).reinterpretAsBytes().and(low);
                ByteVector yh = y.reinterpretAsLongs().lanewise(LSHR, 4).reinterpretAsBytes().and(low);
                ByteVector lo = ByteVector.fromArray(s, tab, tp);
                ByteVector hi = ByteVector.fromArray(s, tab, tp + vl);
                a0 = a0.lanewise(XOR, xl.selectFrom(lo)).lanewise(XOR, xh.selectFrom(hi));
                b0 = b0.lanewise(XOR, yl.selectFrom(lo)).lanewise(XOR, yh.selectFrom(hi));
                lo = ByteVector.fromArray(s, tab, tp + 2 * vl);
                hi = ByteVector.fromArray(s, tab, tp + 3 * vl);
                a1 = a1.lanewise(XOR, xl.selectFrom(lo)).lanewise(XOR, xh.selectFrom(hi));
                b1 = b1.lanewise(XOR, yl.selectFrom(lo)).lanewise(XOR, yh.selectFrom(hi));
                u = u.lanewise(XOR, x);
                v = v.lanewise(XOR, y);
                lo = ByteVector.fromArray(s, tab, tp + 4 * vl);
                hi = ByteVector.fromArray(s, tab, tp + 5 * vl);
                a2 = a2.lanewise(XOR, xl.selectFrom(lo)).lanewise(XOR, xh.selectFrom(hi));
                b2 = b2.lanewise(XOR, yl.selectFrom(lo)).lanewise(XOR, yh.selectFrom(hi));
                lo = ByteVector.fromArray(s, tab, tp + 6 * vl);
                hi = ByteVector.fromArray(s, tab, tp + 7 * vl);
                a3 = a3.lanewise(XOR, xl.selectFrom(lo)).lanewise(XOR, xh.selectFrom(hi));
                b3 = b3.lanewise(XOR, yl.selectFrom(lo)).lanewise(XOR, yh.selectFrom(hi));
            }
            ByteVector.fromArray(s, pb1, qb1 + t).lanewise(XOR, u).intoArray(pb1, qb1 + t);
            ByteVector.fromArray(s, pb1, qb1 + t + vl).lanewise(XOR, v).intoArray(pb1, qb1 + t + vl);
            u = zero;
            v = zero;
            for (; a < e1; a++, tp += 8 * vl) {
                int j = members[a];
                byte[] src = in[j];
                int p = inOff[j] + t;
                ByteVector x = ByteVector.fromArray(s, src, p);
                ByteVector y = ByteVector.fromArray(s, src, p + vl);
                ByteVector xl = x.and(low);
                ByteVector yl = y.and(low);
                ByteVector xh = x.reinterpretAsLongs().lanewise(LSHR, 4).reinterpretAsBytes().and(low);
                ByteVector yh = y.reinterpretAsLongs().lanewise(LSHR, 4).reinterpretAsBytes().and(low);
                ByteVector lo = ByteVector.fromArray(s, tab, tp);
                ByteVector hi = ByteVector.fromArray(s, tab, tp + vl);
                a0 = a0.lanewise(XOR, xl.selectFrom(lo)).lanewise(XOR, xh.selectFrom(hi));
                b0 = b0.lanewise(XOR, yl.selectFrom(lo)).lanewise(XOR, yh.selectFrom(hi));
                lo = ByteVector.fromArray(s, tab, tp + 2 * vl);
                hi = ByteVector.fromArray(s, tab, tp + 3 * vl);
                a1 = a1.lanewise(XOR, xl.selectFrom(lo)).lanewise(XOR, xh.selectFrom(hi));
                b1 = b1.lanewise(XOR, yl.selectFrom(lo)).lanewise(XOR, yh.selectFrom(hi));
                u = u.lanewise(XOR, x);
                v = v.lanewise(XOR, y);
                lo = ByteVector.fromArray(s, tab, tp + 4 * vl);
                hi = ByteVector.fromArray(s, tab, tp + 5 * vl);
                a2 = a2.lanewise(XOR, xl.selectFrom(lo)).lanewise(XOR, xh.selectFrom(hi));
                b2 = b2.lanewise(XOR, yl.selectFrom(lo)).lanewise(XOR, yh.selectFrom(hi));
                lo = ByteVector.fromArray(s, tab, tp + 6 * vl);
                hi = ByteVector.fromArray(s, tab, tp + 7 * vl);
                a3 = a3.lanewise(XOR, xl.selectFrom(lo)).lanewise(XOR, xh.selectFrom(hi));
                b3 = b3.lanewise(XOR, yl.selectFrom(lo)).lanewise(XOR, yh.selectFrom(hi));
            }
            ByteVector.fromArray(s, pb2, qb2 + t).lanewise(XOR, u).intoArray(pb2, qb2 + t);
            ByteVector.fromArray(s, pb2, qb2 + t + vl).lanewise(XOR, v).intoArray(pb2, qb2 + t + vl);
            u = zero;
            v = zero;
            for (; a < e2; a++, tp += 8 * vl) {
                int j = members[a];
                byte[] src = in[j];
                int p = inOff[j] + t;
                ByteVector x = ByteVector.fromArray(s, src, p);
                ByteVector y = ByteVector.fromArray(s, src, p + vl);
                ByteVector xl = x.and(low);
                ByteVector yl = y.and(low);
                ByteVector xh = x.reinterpretAsLongs().lanewise(LSHR, 4).reinterpretAsBytes().and(low);
                ByteVector yh = y.reinterpretAsLongs().lanewise(LSHR, 4).reinterpretAsBytes().and(low);
                ByteVector lo = ByteVector.fromArray(s, tab, tp);
                ByteVector hi = ByteVector.fromArray(s, tab, tp + vl);
                a0 = a0.lanewise(XOR, xl.selectFrom(lo)).lanewise(XOR, xh.selectFrom(hi));
                b0 = b0.lanewise(XOR, yl.selectFrom(lo)).lanewise(XOR, yh.selectFrom(hi));
                lo = ByteVector.fromArray(s, tab, tp + 2 * vl);
                hi = ByteVector.fromArray(s, tab, tp + 3 * vl);
                a1 = a1.lanewise(XOR, xl.selectFrom(lo)).lanewise(XOR, xh.selectFrom(hi));
                b1 = b1.lanewise(XOR, yl.selectFrom(lo)).lanewise(XOR, yh.selectFrom(hi));
                u = u.lanewise(XOR, x);
                v = v.lanewise(XOR, y);
                lo = ByteVector.fromArray(s, tab, tp + 4 * vl);
                hi = ByteVector.fromArray(s, tab, tp + 5 * vl);
                a2 = a2.lanewise(XOR, xl.selectFrom(lo)).lanewise(XOR, xh.selectFrom(hi));
                b2 = b2.lanewise(XOR, yl.selectFrom(lo)).lanewise(XOR, yh.selectFrom(hi));
                lo = ByteVector.fromArray(s, tab, tp + 6 * vl);
                hi = ByteVector.fromArray(s, tab, tp + 7 * vl);
                a3 = a3.lanewise(XOR, xl.selectFrom(lo)).lanewise(XOR, xh.selectFrom(hi));
                b3 = b3.lanewise(XOR, yl.selectFrom(lo)).lanewise(XOR, yh.selectFrom(hi));
            }
            ByteVector.fromArray(s, pb3, qb3 + t).lanewise(XOR, u).intoArray(pb3, qb3 + t);
            ByteVector.fromArray(s, pb3, qb3 + t + vl).lanewise(XOR, v).intoArray(pb3, qb3 + t + vl);
            for (; a < na; a++, tp += 8 * vl) {
                int j = members[a];
                byte[] src = in[j];
                int p = inOff[j] + t;
                ByteVector x = ByteVector.fromArray(s, src, p);
                ByteVector y = ByteVector.fromArray(s, src, p + vl);
                ByteVector xl = x.and(low);
                ByteVector yl = y.and(low);
                ByteVector xh = x.reinterpretAsLongs().lanewise(LSHR, 4).reinterpretAsBytes().and(low);
                ByteVector yh = y.reinterpretAsLongs().lanewise(LSHR, 4).reinterpretAsBytes().and(low);
                ByteVector lo = ByteVector.fromArray(s, tab, tp);
                ByteVector hi = ByteVector.fromArray(s, tab, tp + vl);
                a0 = a0.lanewise(XOR, xl.selectFrom(lo)).lanewise(XOR, xh.selectFrom(hi));
                b0 = b0.lanewise(XOR, yl.selectFrom(lo)).lanewise(XOR, yh.selectFrom(hi));
                lo = ByteVector.fromArray(s, tab, tp + 2 * vl);
                hi = ByteVector.fromArray(s, tab, tp + 3 * vl);
                a1 = a1.lanewise(XOR, xl.selectFrom(lo)).lanewise(XOR, xh.selectFrom(hi));
                b1 = b1.lanewise(XOR, yl.selectFrom(lo)).lanewise(XOR, yh.selectFrom(hi));
                lo = ByteVector.fromArray(s, tab, tp + 4 * vl);
                hi = ByteVector.fromArray(s, tab, tp + 5 * vl);
                a2 = a2.lanewise(XOR, xl.selectFrom(lo)).lanewise(XOR, xh.selectFrom(hi));
                b2 = b2.lanewise(XOR, yl.selectFrom(lo)).lanewise(XOR, yh.selectFrom(hi));
                lo = ByteVector.fromArray(s, tab, tp + 6 * vl);
                hi = ByteVector.fromArray(s, tab, tp + 7 * vl);
                a3 = a3.lanewise(XOR, xl.selectFrom(lo)).lanewise(XOR, xh.selectFrom(hi));
                b3 = b3.lanewise(XOR, yl.selectFrom(lo)).lanewise(XOR, yh.selectFrom(hi));
            }
            if (pc != null) {
                a1 = a1.lanewise(XOR, ByteVector.fromArray(s, pc, qc + t));
                b1 = b1.lanewise(XOR, ByteVector.fromArray(s, pc, qc + t + vl));
            }
            a0.intoArray(pa0, qa0 + t);
            a1.intoArray(pa1, qa1 + t);
            a2.intoArray(pa2, qa2 + t);
            a3.intoArray(pa3, qa3 + t);
            b0.intoArray(pa0, qa0 + t + vl);
            b1.intoArray(pa1, qa1 + t + vl);
            b2.intoArray(pa2, qa2 + t + vl);
            b3.intoArray(pa3, qa3 + t + vl);
        }
        return t;
    }
}
