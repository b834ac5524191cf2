package io.hayloft.erasure.kernel.vector;

import io.hayloft.erasure.kernel.FusedOp;
import io.hayloft.erasure.kernel.GfKernel;
import io.hayloft.erasure.kernel.MatrixOp;
import io.hayloft.erasure.kernel.PiggybackEncode;
import java.util.Locale;
import jdk.incubator.vector.ByteVector;
import jdk.incubator.vector.VectorSpecies;

/**
 * The pure-Java SIMD backend: GF(2^8) matrix products with the incubating Vector API, using the
 * split-nibble table lookup of ISA-L, {@code c*x = lo[c][x & 15] ^ hi[c][x >>> 4]}, where each
 * 16-entry table is one vector and the lookup is {@code selectFrom} ({@code vpermb} with AVX-512 VBMI,
 * {@code pshufb} on 128-bit vectors).
 *
 * <p>What the running JVM compiles well decides the variant, once, when the kernel is created:
 * <ul>
 *   <li>the species: the preferred one when it is 512 bits (one {@code vpermb} per lookup) or 128
 *       bits; on 256-bit machines (AVX2) the 128-bit species, because a 256-bit byte
 *       {@code selectFrom} crosses 128-bit lanes and compiles to several shuffles and blends;</li>
 *   <li>the unroll: two vectors per input per step, so each input's table vectors are loaded once per
 *       two vectors; {@code x1} is kept for comparison.</li>
 * </ul>
 * The JDK feature version ({@code Runtime.version().feature()}) is part of {@link #description()}
 * but does not change the choice: every supported JDK runs this same kernel (its throughput per JDK
 * is in docs/benchmarks-history.md).
 * The high nibble is taken with a shift of 64-bit lanes (one instruction) and a mask, never a byte-lane
 * shift (about nine). Methods holding vectors are never split into helpers that take or return vectors:
 * a helper that C2 does not inline boxes every vector and runs about 40 times slower.
 *
 * <p>Hitchhiker's encode with 4 parity units has a loop of its own ({@link PiggybackVectorOp}): the
 * multiplications of Reed-Solomon, with the piggybacks and coupling as XORs of registers.
 *
 * <p>The system property {@value #VARIANT_PROPERTY} overrides the choice for experiments:
 * {@code x1}, {@code x2}, optionally followed by {@code /128} or {@code /preferred} (for example
 * {@code x2/128}). The bytes are the same in every variant.
 *
 * <p>Immutable and thread-safe.
 */
public final class VectorKernel implements GfKernel {

    /** Overrides the kernel variant; see the class comment. */
    public static final String VARIANT_PROPERTY = "hayloft.erasure.vector.variant";

    /** {@code steps} runs every Hitchhiker encode as the tiled steps; see {@link #preparePiggyback}. */
    public static final String PIGGYBACK_PROPERTY = "hayloft.erasure.vector.piggyback";

    private final VectorSpecies<Byte> species;
    private final boolean unroll2;
    private final String description;

    private VectorKernel(VectorSpecies<Byte> species, boolean unroll2) {
        this.species = species;
        this.unroll2 = unroll2;
        this.description = String.format(Locale.ROOT, "Vector API split-nibble selectFrom, %d-bit, %s unroll, JDK %d",
                species.vectorBitSize(), unroll2 ? "2x" : "1x", Runtime.version().feature());
    }

    /**
     * Chooses the variant for this JVM.
     *
     * @throws IllegalStateException if the JVM offers no vectors of at least 128 bits, where the Vector
     *         API would be slower than the scalar kernel
     */
    static VectorKernel create() {
        VectorSpecies<Byte> preferred = ByteVector.SPECIES_PREFERRED;
        if (preferred.vectorBitSize() < 128) {
            throw new IllegalStateException("preferred vector size is " + preferred.vectorBitSize()
                    + " bits; the vector kernel needs at least 128");
        }
        String forced = System.getProperty(VARIANT_PROPERTY);
        if (forced != null && !forced.isBlank() && parseUnroll(forced) == 0) {
            throw new IllegalStateException("bad " + VARIANT_PROPERTY + " '" + forced + "'; expected x1 or x2,"
                    + " optionally followed by /128 or /preferred");
        }
        return new VectorKernel(NibbleLoops.SPECIES, NibbleLoops.UNROLL2);
    }

    /** 1 or 2 for a valid variant string, 0 for an invalid one. */
    static int parseUnroll(String variant) {
        String[] parts = variant.trim().toLowerCase(Locale.ROOT).split("/", -1);
        if (parts.length > 2 || (parts.length == 2 && !parts[1].equals("128") && !parts[1].equals("preferred"))) {
            return 0;
        }
        return parts[0].equals("x1") ? 1 : parts[0].equals("x2") ? 2 : 0;
    }

    /** The species the loops are compiled for: see the class comment. */
    static VectorSpecies<Byte> chooseSpecies(String variant) {
        VectorSpecies<Byte> preferred = ByteVector.SPECIES_PREFERRED;
        if (variant != null && parseUnroll(variant) != 0) {
            String v = variant.trim().toLowerCase(Locale.ROOT);
            if (v.endsWith("/128")) {
                return ByteVector.SPECIES_128;
            }
            if (v.endsWith("/preferred")) {
                return preferred;
            }
        }
        return preferred.vectorBitSize() == 512 ? preferred : ByteVector.SPECIES_128;
    }

    @Override
    public String name() {
        return "vector";
    }

    @Override
    public String description() {
        return description;
    }

    @Override
    public MatrixOp prepare(byte[][] matrix) {
        return new VectorOp(matrix);
    }

    /**
     * Hitchhiker encodes with 4 parity units ({@link PiggybackVectorOp#supports}) run in
     * {@link PiggybackVectorOp}; the others as the tiled {@link PiggybackEncode#steps()}. The system
     * property {@value #PIGGYBACK_PROPERTY}{@code =steps} forces the tiled steps (for comparison).
     */
    @Override
    public FusedOp preparePiggyback(PiggybackEncode encode) {
        if (!"steps".equals(System.getProperty(PIGGYBACK_PROPERTY)) && PiggybackVectorOp.supports(encode)) {
            return new PiggybackVectorOp(encode);
        }
        return GfKernel.super.preparePiggyback(encode);
    }

    @Override
    public String toString() {
        return "vector kernel (" + description + ")";
    }
}
