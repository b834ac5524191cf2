package io.hayloft.format.needle;

/**
 * CRC32C arithmetic that needs no pass over the data: {@link #combine} gives the CRC32C of a
 * concatenation from the CRCs of its parts (zlib's {@code crc32_combine}, over the Castagnoli
 * polynomial). It lets a read compute the CRC32C of a needle's data once and check the needle's
 * stored CRC (which also covers header fields, see {@link Needle#check(ByteBuffer, int[])}) with it, instead of a second
 * pass over the data.
 *
 * <p>Thread-safe (stateless; the table is computed once).
 */
public final class Crc32c {
    /** The Castagnoli polynomial, reflected. */
    private static final int POLY = 0x82F63B78;
    /** x^(2^n) mod p(x), for n = 0..31. */
    private static final int[] X2N = new int[32];

    static {
        int p = 1 << 30; // x^1
        X2N[0] = p;
        for (int n = 1; n < 32; n++) {
            X2N[n] = p = multiply(p, p);
        }
    }

    private Crc32c() {
    }

    /** a(x) * b(x) mod p(x), in the reflected bit order. */
    private static int multiply(int a, int b) {
        int m = 1 << 31;
        int p = 0;
        while (true) {
            if ((a & m) != 0) {
                p ^= b;
                if ((a & (m - 1)) == 0) {
                    break;
                }
            }
            m >>>= 1;
            b = (b & 1) != 0 ? (b >>> 1) ^ POLY : b >>> 1;
        }
        return p;
    }

    /** x^(n * 2^k) mod p(x). */
    private static int x2nModP(long n, int k) {
        int p = 1 << 31; // x^0
        while (n != 0) {
            if ((n & 1) != 0) {
                p = multiply(X2N[k & 31], p);
            }
            n >>>= 1;
            k++;
        }
        return p;
    }

    /**
     * The CRC32C of A followed by B, given {@code crcA} = CRC32C(A), {@code crcB} = CRC32C(B) and
     * the length of B in bytes. O(log lengthB).
     */
    public static int combine(int crcA, int crcB, long lengthB) {
        if (lengthB < 0) {
            throw new IllegalArgumentException("length must be >= 0, got " + lengthB);
        }
        return multiply(x2nModP(lengthB, 3), crcA) ^ crcB;
    }
}
