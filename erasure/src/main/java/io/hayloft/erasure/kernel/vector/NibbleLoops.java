package io.hayloft.erasure.kernel.vector;

import static jdk.incubator.vector.VectorOperators.LSHR;
import static jdk.incubator.vector.VectorOperators.XOR;

import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * The SIMD inner loops of {@link VectorOp}: {@code out[i] (^)= sum_j c[i][j] * in[j]} for a group of
 * 4, 3, 2 or 1 output rows over heap arrays, in ISA-L's loop order: every input vector is loaded once and
 * folded into every output's accumulator, and each output is stored once.
 *
 * <p>Table layout (built by {@link VectorOp}): for active input {@code a} of a group of {@code g} rows,
 * row {@code r} has its low-nibble table at vector {@code (a * g + r) * 2} and its high-nibble table at
 * the vector after it, each a whole vector of {@code lo[x & 15]} (resp. {@code hi[x & 15]}). When every
 * coefficient of input {@code a} in the group is 0 or 1 ({@code kinds[a] == 0}), the low slot is
 * instead a mask (all ones for 1, zeros for 0) and the input is ANDed and XORed, no lookup.
 *
 * <p>The species is a {@code static final} constant because C2 only compiles Vector API calls to
 * vector instructions when the species is a compile-time constant. Each loop returns how many bytes
 * it processed (a multiple of the vector length); the caller finishes the tail with scalar code.
 * Stateless and thread-safe.
 */
final class NibbleLoops {

    static final VectorSpecies<Byte> SPECIES =
            VectorKernel.chooseSpecies(System.getProperty(VectorKernel.VARIANT_PROPERTY));
    static final boolean UNROLL2 = readUnroll2();
    static final int VL = SPECIES.length();

    private NibbleLoops() {
    }

    private static boolean readUnroll2() {
        String v = System.getProperty(VectorKernel.VARIANT_PROPERTY);
        return v == null || VectorKernel.parseUnroll(v) != 1;
    }

    static int rows4(byte[][] in, int[] inOff, int[] active, byte[] kinds, byte[] tab,
                     byte[] o0, int q0, byte[] o1, int q1, byte[] o2, int q2, byte[] o3, int q3,
                     int n, boolean acc) {
        final VectorSpecies<Byte> s = SPECIES;
        final int vl = VL;
        final int na = active.length;
        final ByteVector low = ByteVector.broadcast(s, (byte) 0x0f);
        final ByteVector zero = ByteVector.zero(s);
        int t = 0;
        if (UNROLL2) {
            for (; t <= n - 2 * vl; t += 2 * vl) {
                ByteVector a0 = zero, a1 = zero, a2 = zero, a3 = zero, b0 = zero, b1 = zero, b2 = zero, b3 = zero;
                if (acc) {
                    a0 = ByteVector.fromArray(s, o0, q0 + t);
                    a1 = ByteVector.fromArray(s, o1, q1 + t);
                    a2 = ByteVector.fromArray(s, o2, q2 + t);
                    a3 = ByteVector.fromArray(s, o3, q3 + t);
                    b0 = ByteVector.fromArray(s, o0, q0 + t + vl);
                    b1 = ByteVector.fromArray(s, o1, q1 + t + vl);
                    b2 = ByteVector.fromArray(s, o2, q2 + t + vl);
                    b3 = ByteVector.fromArray(s, o3, q3 + t + vl);
                }
                for (int a = 0, tp = 0; a < na; a++, tp += 8 * vl) {
                    int j = active[a];
                    byte[] src = in[j];
                    int p = inOff[j] + t;
                    ByteVector x = ByteVector.fromArray(s, src, p);
                    ByteVector y = ByteVector.fromArray(s, src, p + vl);
                    if (kinds[a] != 0) {
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
                    } else {
                        ByteVector m = ByteVector.fromArray(s, tab, tp);
                        a0 = a0.lanewise(XOR, x.and(m));
                        b0 = b0.lanewise(XOR, y.and(m));
                        m = ByteVector.fromArray(s, tab, tp + 2 * vl);
                        a1 = a1.lanewise(XOR, x.and(m));
                        b1 = b1.lanewise(XOR, y.and(m));
                        m = ByteVector.fromArray(s, tab, tp + 4 * vl);
                        a2 = a2.lanewise(XOR, x.and(m));
                        b2 = b2.lanewise(XOR, y.and(m));
                        m = ByteVector.fromArray(s, tab, tp + 6 * vl);
                        a3 = a3.lanewise(XOR, x.and(m));
                        b3 = b3.lanewise(XOR, y.and(m));
                    }
                }
                a0.intoArray(o0, q0 + t);
                a1.intoArray(o1, q1 + t);
                a2.intoArray(o2, q2 + t);
                a3.intoArray(o3, q3 + t);
                b0.intoArray(o0, q0 + t + vl);
                b1.intoArray(o1, q1 + t + vl);
                b2.intoArray(o2, q2 + t + vl);
                b3.intoArray(o3, q3 + t + vl);
            }
        }
        for (; t <= n - vl; t += vl) {
            ByteVector a0 = zero, a1 = zero, a2 = zero, a3 = zero;
            if (acc) {
                a0 = ByteVector.fromArray(s, o0, q0 + t);
                a1 = ByteVector.fromArray(s, o1, q1 + t);
                a2 = ByteVector.fromArray(s, o2, q2 + t);
                a3 = ByteVector.fromArray(s, o3, q3 + t);
            }
            for (int a = 0, tp = 0; a < na; a++, tp += 8 * vl) {
                int j = active[a];
                ByteVector x = ByteVector.fromArray(s, in[j], inOff[j] + t);
                if (kinds[a] != 0) {
                    ByteVector xl = x.and(low);
                    ByteVector xh = x.reinterpretAsLongs().lanewise(LSHR, 4).reinterpretAsBytes().and(low);
                    a0 = a0.lanewise(XOR, xl.selectFrom(ByteVector.fromArray(s, tab, tp)))
                            .lanewise(XOR, xh.selectFrom(ByteVector.fromArray(s, tab, tp + vl)));
                    a1 = a1.lanewise(XOR, xl.selectFrom(ByteVector.fromArray(s, tab, tp + 2 * vl)))
                            .lanewise(XOR, xh.selectFrom(ByteVector.fromArray(s, tab, tp + 3 * vl)));
                    a2 = a2.lanewise(XOR, xl.selectFrom(ByteVector.fromArray(s, tab, tp + 4 * vl)))
                            .lanewise(XOR, xh.selectFrom(ByteVector.fromArray(s, tab, tp + 5 * vl)));
                    a3 = a3.lanewise(XOR, xl.selectFrom(ByteVector.fromArray(s, tab, tp + 6 * vl)))
                            .lanewise(XOR, xh.selectFrom(ByteVector.fromArray(s, tab, tp + 7 * vl)));
                } else {
                    a0 = a0.lanewise(XOR, x.and(ByteVector.fromArray(s, tab, tp)));
                    a1 = a1.lanewise(XOR, x.and(ByteVector.fromArray(s, tab, tp + 2 * vl)));
                    a2 = a2.lanewise(XOR, x.and(ByteVector.fromArray(s, tab, tp + 4 * vl)));
                    a3 = a3.lanewise(XOR, x.and(ByteVector.fromArray(s, tab, tp + 6 * vl)));
                }
            }
            a0.intoArray(o0, q0 + t);
            a1.intoArray(o1, q1 + t);
            a2.intoArray(o2, q2 + t);
            a3.intoArray(o3, q3 + t);
        }
        return t;
    }

    static int rows3(byte[][] in, int[] inOff, int[] active, byte[] kinds, byte[] tab,
                     byte[] o0, int q0, byte[] o1, int q1, byte[] o2, int q2,
                     int n, boolean acc) {
        final VectorSpecies<Byte> s = SPECIES;
        final int vl = VL;
        final int na = active.length;
        final ByteVector low = ByteVector.broadcast(s, (byte) 0x0f);
        final ByteVector zero = ByteVector.zero(s);
        int t = 0;
        if (UNROLL2) {
            for (; t <= n - 2 * vl; t += 2 * vl) {
                ByteVector a0 = zero, a1 = zero, a2 = zero, b0 = zero, b1 = zero, b2 = zero;
                if (acc) {
                    a0 = ByteVector.fromArray(s, o0, q0 + t);
                    a1 = ByteVector.fromArray(s, o1, q1 + t);
                    a2 = ByteVector.fromArray(s, o2, q2 + t);
                    b0 = ByteVector.fromArray(s, o0, q0 + t + vl);
                    b1 = ByteVector.fromArray(s, o1, q1 + t + vl);
                    b2 = ByteVector.fromArray(s, o2, q2 + t + vl);
                }
                for (int a = 0, tp = 0; a < na; a++, tp += 6 * vl) {
                    int j = active[a];
                    byte[] src = in[j];
                    int p = inOff[j] + t;
                    ByteVector x = ByteVector.fromArray(s, src, p);
                    ByteVector y = ByteVector.fromArray(s, src, p + vl);
                    if (kinds[a] != 0) {
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
                    } else {
                        ByteVector m = ByteVector.fromArray(s, tab, tp);
                        a0 = a0.lanewise(XOR, x.and(m));
                        b0 = b0.lanewise(XOR, y.and(m));
                        m = ByteVector.fromArray(s, tab, tp + 2 * vl);
                        a1 = a1.lanewise(XOR, x.and(m));
                        b1 = b1.lanewise(XOR, y.and(m));
                        m = ByteVector.fromArray(s, tab, tp + 4 * vl);
                        a2 = a2.lanewise(XOR, x.and(m));
                        b2 = b2.lanewise(XOR, y.and(m));
                    }
                }
                a0.intoArray(o0, q0 + t);
                a1.intoArray(o1, q1 + t);
                a2.intoArray(o2, q2 + t);
                b0.intoArray(o0, q0 + t + vl);
                b1.intoArray(o1, q1 + t + vl);
                b2.intoArray(o2, q2 + t + vl);
            }
        }
        for (; t <= n - vl; t += vl) {
            ByteVector a0 = zero, a1 = zero, a2 = zero;
            if (acc) {
                a0 = ByteVector.fromArray(s, o0, q0 + t);
                a1 = ByteVector.fromArray(s, o1, q1 + t);
                a2 = ByteVector.fromArray(s, o2, q2 + t);
            }
            for (int a = 0, tp = 0; a < na; a++, tp += 6 * vl) {
                int j = active[a];
                ByteVector x = ByteVector.fromArray(s, in[j], inOff[j] + t);
                if (kinds[a] != 0) {
                    ByteVector xl = x.and(low);
                    ByteVector xh = x.reinterpretAsLongs().lanewise(LSHR, 4).reinterpretAsBytes().and(low);
                    a0 = a0.lanewise(XOR, xl.selectFrom(ByteVector.fromArray(s, tab, tp)))
                            .lanewise(XOR, xh.selectFrom(ByteVector.fromArray(s, tab, tp + vl)));
                    a1 = a1.lanewise(XOR, xl.selectFrom(ByteVector.fromArray(s, tab, tp + 2 * vl)))
                            .lanewise(XOR, xh.selectFrom(ByteVector.fromArray(s, tab, tp + 3 * vl)));
                    a2 = a2.lanewise(XOR, xl.selectFrom(ByteVector.fromArray(s, tab, tp + 4 * vl)))
                            .lanewise(XOR, xh.selectFrom(ByteVector.fromArray(s, tab, tp + 5 * vl)));
                } else {
                    a0 = a0.lanewise(XOR, x.and(ByteVector.fromArray(s, tab, tp)));
                    a1 = a1.lanewise(XOR, x.and(ByteVector.fromArray(s, tab, tp + 2 * vl)));
                    a2 = a2.lanewise(XOR, x.and(ByteVector.fromArray(s, tab, tp + 4 * vl)));
                }
            }
            a0.intoArray(o0, q0 + t);
            a1.intoArray(o1, q1 + t);
            a2.intoArray(o2, q2 + t);
        }
        return t;
    }

    static int rows2(byte[][] in, int[] inOff, int[] active, byte[] kinds, byte[] tab,
                     byte[] o0, int q0, byte[] o1, int q1, int n, boolean acc) {
        final VectorSpecies<Byte> s = SPECIES;
        final int vl = VL;
        final int na = active.length;
        final ByteVector low = ByteVector.broadcast(s, (byte) 0x0f);
        final ByteVector zero = ByteVector.zero(s);
        int t = 0;
        if (UNROLL2) {
            for (; t <= n - 2 * vl; t += 2 * vl) {
                ByteVector a0 = zero, a1 = zero, b0 = zero, b1 = zero;
                if (acc) {
                    a0 = ByteVector.fromArray(s, o0, q0 + t);
                    a1 = ByteVector.fromArray(s, o1, q1 + t);
                    b0 = ByteVector.fromArray(s, o0, q0 + t + vl);
                    b1 = ByteVector.fromArray(s, o1, q1 + t + vl);
                }
                for (int a = 0, tp = 0; a < na; a++, tp += 4 * vl) {
                    int j = active[a];
                    byte[] src = in[j];
                    int p = inOff[j] + t;
                    ByteVector x = ByteVector.fromArray(s, src, p);
                    ByteVector y = ByteVector.fromArray(s, src, p + vl);
                    if (kinds[a] != 0) {
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
                    } else {
                        ByteVector m = ByteVector.fromArray(s, tab, tp);
                        a0 = a0.lanewise(XOR, x.and(m));
                        b0 = b0.lanewise(XOR, y.and(m));
                        m = ByteVector.fromArray(s, tab, tp + 2 * vl);
                        a1 = a1.lanewise(XOR, x.and(m));
                        b1 = b1.lanewise(XOR, y.and(m));
                    }
                }
                a0.intoArray(o0, q0 + t);
                a1.intoArray(o1, q1 + t);
                b0.intoArray(o0, q0 + t + vl);
                b1.intoArray(o1, q1 + t + vl);
            }
        }
        for (; t <= n - vl; t += vl) {
            ByteVector a0 = zero, a1 = zero;
            if (acc) {
                a0 = ByteVector.fromArray(s, o0, q0 + t);
                a1 = ByteVector.fromArray(s, o1, q1 + t);
            }
            for (int a = 0, tp = 0; a < na; a++, tp += 4 * vl) {
                int j = active[a];
                ByteVector x = ByteVector.fromArray(s, in[j], inOff[j] + t);
                if (kinds[a] != 0) {
                    ByteVector xl = x.and(low);
                    ByteVector xh = x.reinterpretAsLongs().lanewise(LSHR, 4).reinterpretAsBytes().and(low);
                    a0 = a0.lanewise(XOR, xl.selectFrom(ByteVector.fromArray(s, tab, tp)))
                            .lanewise(XOR, xh.selectFrom(ByteVector.fromArray(s, tab, tp + vl)));
                    a1 = a1.lanewise(XOR, xl.selectFrom(ByteVector.fromArray(s, tab, tp + 2 * vl)))
                            .lanewise(XOR, xh.selectFrom(ByteVector.fromArray(s, tab, tp + 3 * vl)));
                } else {
                    a0 = a0.lanewise(XOR, x.and(ByteVector.fromArray(s, tab, tp)));
                    a1 = a1.lanewise(XOR, x.and(ByteVector.fromArray(s, tab, tp + 2 * vl)));
                }
            }
            a0.intoArray(o0, q0 + t);
            a1.intoArray(o1, q1 + t);
        }
        return t;
    }

    static int rows1(byte[][] in, int[] inOff, int[] active, byte[] kinds, byte[] tab,
                     byte[] o0, int q0, int n, boolean acc) {
        final VectorSpecies<Byte> s = SPECIES;
        final int vl = VL;
        final int na = active.length;
        final ByteVector low = ByteVector.broadcast(s, (byte) 0x0f);
        final ByteVector zero = ByteVector.zero(s);
        int t = 0;
        if (UNROLL2) {
            for (; t <= n - 2 * vl; t += 2 * vl) {
                ByteVector a0 = zero, b0 = zero;
                if (acc) {
                    a0 = ByteVector.fromArray(s, o0, q0 + t);
                    b0 = ByteVector.fromArray(s, o0, q0 + t + vl);
                }
                for (int a = 0, tp = 0; a < na; a++, tp += 2 * vl) {
                    int j = active[a];
                    byte[] src = in[j];
                    int p = inOff[j] + t;
                    ByteVector x = ByteVector.fromArray(s, src, p);
                    ByteVector y = ByteVector.fromArray(s, src, p + vl);
                    if (kinds[a] != 0) {
                        ByteVector lo = ByteVector.fromArray(s, tab, tp);
                        ByteVector hi = ByteVector.fromArray(s, tab, tp + vl);
                        a0 = a0.lanewise(XOR, x.and(low).selectFrom(lo))
                                .lanewise(XOR, x.reinterpretAsLongs().lanewise(LSHR, 4).reinterpretAsBytes().and(low).selectFrom(hi));
                        b0 = b0.lanewise(XOR, y.and(low).selectFrom(lo))
                                .lanewise(XOR, y.reinterpretAsLongs().lanewise(LSHR, 4).reinterpretAsBytes().and(low).selectFrom(hi));
                    } else {
                        // A single row with kind 0 has coefficient 1 (inputs with 0 are not active).
                        a0 = a0.lanewise(XOR, x);
                        b0 = b0.lanewise(XOR, y);
                    }
                }
                a0.intoArray(o0, q0 + t);
                b0.intoArray(o0, q0 + t + vl);
            }
        }
        for (; t <= n - vl; t += vl) {
            ByteVector a0 = acc ? ByteVector.fromArray(s, o0, q0 + t) : zero;
            for (int a = 0, tp = 0; a < na; a++, tp += 2 * vl) {
                int j = active[a];
                ByteVector x = ByteVector.fromArray(s, in[j], inOff[j] + t);
                if (kinds[a] != 0) {
                    a0 = a0.lanewise(XOR, x.and(low).selectFrom(ByteVector.fromArray(s, tab, tp)))
                            .lanewise(XOR, x.reinterpretAsLongs().lanewise(LSHR, 4).reinterpretAsBytes().and(low)
                                    .selectFrom(ByteVector.fromArray(s, tab, tp + vl)));
                } else {
                    a0 = a0.lanewise(XOR, x);
                }
            }
            a0.intoArray(o0, q0 + t);
        }
        return t;
    }
}
