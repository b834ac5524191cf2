package io.hayloft.erasure.gf;

/**
 * Arithmetic in GF(2^8) with the primitive polynomial {@code 0x11D} (x^8+x^4+x^3+x^2+1) and
 * generator 2: the field of ISA-L and Hadoop. Addition is XOR. Values are unsigned bytes held in
 * {@code int}s (0..255). Stateless and thread-safe.
 */
public final class Gf256 {

    public static final int POLYNOMIAL = 0x11D;

    private static final int[] EXP = new int[512];
    private static final int[] LOG = new int[256];
    /** {@code MUL[a][b] = a * b}, 64 KiB: the scalar kernel's lookup table. */
    private static final byte[][] MUL = new byte[256][256];

    static {
        int x = 1;
        for (int i = 0; i < 255; i++) {
            EXP[i] = x;
            LOG[x] = i;
            x <<= 1;
            if ((x & 0x100) != 0) {
                x ^= POLYNOMIAL;
            }
        }
        for (int i = 255; i < EXP.length; i++) {
            EXP[i] = EXP[i - 255];
        }
        for (int a = 0; a < 256; a++) {
            for (int b = 0; b < 256; b++) {
                MUL[a][b] = (byte) slowMul(a, b);
            }
        }
    }

    private Gf256() {
    }

    private static int slowMul(int a, int b) {
        if (a == 0 || b == 0) {
            return 0;
        }
        return EXP[LOG[a] + LOG[b]];
    }

    public static int add(int a, int b) {
        return (a ^ b) & 0xff;
    }

    public static int mul(int a, int b) {
        return MUL[a & 0xff][b & 0xff] & 0xff;
    }

    public static int div(int a, int b) {
        if ((b & 0xff) == 0) {
            throw new ArithmeticException("division by zero in GF(2^8)");
        }
        if ((a & 0xff) == 0) {
            return 0;
        }
        return EXP[LOG[a & 0xff] + 255 - LOG[b & 0xff]];
    }

    public static int inv(int a) {
        return div(1, a);
    }

    /** {@code 2^n}. */
    public static int exp(int n) {
        return EXP[Math.floorMod(n, 255)];
    }

    /**
     * The 256-byte row {@code c * x} for every x. Shared; callers must not modify it.
     */
    public static byte[] mulTable(int c) {
        return MUL[c & 0xff];
    }

    /** Low-nibble table {@code c * x} for x = 0..15 (the split-nibble method of ISA-L and the Vector kernel). */
    public static byte[] lowNibbleTable(int c) {
        byte[] t = new byte[16];
        for (int x = 0; x < 16; x++) {
            t[x] = (byte) mul(c, x);
        }
        return t;
    }

    /** High-nibble table {@code c * (x << 4)} for x = 0..15. */
    public static byte[] highNibbleTable(int c) {
        byte[] t = new byte[16];
        for (int x = 0; x < 16; x++) {
            t[x] = (byte) mul(c, x << 4);
        }
        return t;
    }
}
