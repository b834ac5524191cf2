package io.hayloft.erasure.gf;

/**
 * Small dense matrices over GF(2^8) as {@code byte[rows][cols]}: the generator matrices of the codes.
 * Stateless and thread-safe.
 */
public final class GfMatrix {

    private GfMatrix() {
    }

    /**
     * The {@code r x k} Cauchy parity matrix of ISA-L's {@code gf_gen_cauchy1_matrix} and Hadoop's
     * {@code RSRawEncoder}: {@code C[i][j] = inv((k + i) XOR j)}.
     *
     * @throws IllegalArgumentException unless {@code k >= 1}, {@code r >= 1} and {@code k + r <= 256}
     */
    public static byte[][] cauchy(int k, int r) {
        checkDimensions(k, r);
        byte[][] c = new byte[r][k];
        for (int i = 0; i < r; i++) {
            for (int j = 0; j < k; j++) {
                c[i][j] = (byte) Gf256.inv((k + i) ^ j);
            }
        }
        return c;
    }

    /** Validates code dimensions, naming the bad value. */
    public static void checkDimensions(int k, int r) {
        if (k < 1) {
            throw new IllegalArgumentException("k (data units) must be >= 1, was " + k);
        }
        if (r < 1) {
            throw new IllegalArgumentException("r (parity units) must be >= 1, was " + r);
        }
        if (k + r > 256) {
            throw new IllegalArgumentException("k + r must be <= 256 in GF(2^8), was " + k + " + " + r + " = " + (k + r));
        }
    }

    public static byte[][] copy(byte[][] m) {
        byte[][] c = new byte[m.length][];
        for (int i = 0; i < m.length; i++) {
            c[i] = m[i].clone();
        }
        return c;
    }

    /** {@code v ^= f * w}, elementwise. */
    static void addScaled(byte[] v, byte[] w, int f) {
        if (f == 0) {
            return;
        }
        byte[] t = Gf256.mulTable(f);
        for (int i = 0; i < v.length; i++) {
            v[i] ^= t[w[i] & 0xff];
        }
    }

    static void scale(byte[] v, int f) {
        byte[] t = Gf256.mulTable(f);
        for (int i = 0; i < v.length; i++) {
            v[i] = t[v[i] & 0xff];
        }
    }
}
