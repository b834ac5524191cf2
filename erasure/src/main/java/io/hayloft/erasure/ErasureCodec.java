package io.hayloft.erasure;

import io.hayloft.erasure.codec.Hitchhiker;
import io.hayloft.erasure.codec.ReedSolomon;
import io.hayloft.erasure.kernel.GfKernel;
import io.hayloft.erasure.kernel.Kernels;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;

/**
 * An erasure code over a stripe of {@code k} data and {@code r} parity units of equal size.
 *
 * <p>Units are numbered {@code 0..k-1} (data) then {@code k..k+r-1} (parity). Hitchhiker codes split
 * every unit into two substripes by hop-and-couple ({@code a} = first half, {@code b} = second half),
 * so their units must have an even size; Reed-Solomon units may have any size.
 *
 * <p>Two ways to use a codec:
 * <ul>
 *   <li>In memory: {@link #encode(ByteBuffer[], ByteBuffer[])} and {@link #decode(ByteBuffer[], int...)}
 *       work directly on the caller's buffers (heap or direct, mixed), without copying units.</li>
 *   <li>Streaming, for units far larger than memory: {@link #encode(long, UnitReader, UnitWriter)},
 *       {@link #decode(long, int[], UnitReader, UnitWriter)}, {@link #repair} and
 *       {@link #readRange} read through a {@link UnitReader} in bounded chunks
 *       ({@link #chunkSize()} bytes per unit and substripe at a time; the encode, {@code chunkSize} bytes
 *       per unit) and read only what they need.</li>
 * </ul>
 *
 * <p>Codecs are immutable and thread-safe: one instance may serve many threads at once, and every
 * method may be called any number of times.
 *
 * <pre>{@code
 * ErasureCodec codec = ErasureCodec.create(CodecKind.HH_XOR_PLUS, 10, 4);
 * codec.encode(data, parity);            // 10 data buffers in, 4 parity buffers out
 * codec.decode(units, 3, 11);            // rebuilds units 3 and 11 in place
 * }</pre>
 */
public interface ErasureCodec extends AutoCloseable {

    /** Default bytes per unit (and per substripe) processed at a time by the streaming methods. */
    int DEFAULT_CHUNK_SIZE = 1 << 20;

    /** A codec with the best available backend and the default chunk size. */
    static ErasureCodec create(CodecKind kind, int k, int r) {
        return create(kind, k, r, Kernels.best(), DEFAULT_CHUNK_SIZE);
    }

    /**
     * A codec on the given backend.
     *
     * @param chunkSize bytes per unit and substripe held in memory at a time by streaming operations
     *                  (per unit, all substripes together, by the streaming encode)
     * @throws IllegalArgumentException naming the bad value when k, r or chunkSize are invalid
     */
    static ErasureCodec create(CodecKind kind, int k, int r, GfKernel kernel, int chunkSize) {
        if (kind == null) {
            throw new IllegalArgumentException("codec kind is required");
        }
        return kind == CodecKind.RS
                ? new ReedSolomon(k, r, kernel, chunkSize)
                : new Hitchhiker(kind, k, r, kernel, chunkSize);
    }

    CodecKind kind();

    int dataUnits();

    int parityUnits();

    default int totalUnits() {
        return dataUnits() + parityUnits();
    }

    /** Substripes per unit: 1 for Reed-Solomon, 2 for Hitchhiker. Unit sizes must be a multiple. */
    int substripes();

    int chunkSize();

    GfKernel kernel();

    // ----- in memory -----

    /**
     * Computes the parity of one stripe held in memory. Every data buffer must have the same number of
     * bytes remaining ({@code n}, a multiple of {@link #substripes()}); each parity buffer receives
     * exactly {@code n} bytes at its position. No position or limit changes.
     *
     * @throws IllegalArgumentException naming the buffer when counts or sizes do not match
     */
    void encode(ByteBuffer[] data, ByteBuffer[] parity);

    /**
     * Rebuilds the {@code erased} units of a stripe held in memory, in place: {@code units} holds all
     * {@code k + r} buffers with the same bytes remaining; the erased ones are overwritten and the
     * others are only read (any {@code k} of them).
     *
     * @throws TooManyErasuresException if more than {@code r} units are erased
     */
    void decode(ByteBuffer[] units, int... erased);

    // ----- streaming -----

    /**
     * Encodes a stripe of units of {@code unitSize} bytes: reads data units, writes parity units,
     * {@code chunkSize / substripes} bytes of every substripe of every unit at a time (so
     * {@code (k + r) * chunkSize} bytes in memory whatever the code). Each chunk is read once and all
     * of its parity computed in one pass over it.
     */
    void encode(long unitSize, UnitReader data, UnitWriter parity) throws IOException;

    /**
     * Rebuilds every unit in {@code erased} from the others, reading whole units from {@code k}
     * survivors (data units preferred) and writing each rebuilt unit through {@code out}.
     *
     * @throws TooManyErasuresException if more than {@code r} units are erased
     */
    void decode(long unitSize, int[] erased, UnitReader survivors, UnitWriter out) throws IOException;

    /**
     * The byte ranges {@link #repair} will read to rebuild {@code lost} when the units in
     * {@code unavailable} cannot be read either. For a single lost Hitchhiker data unit this is the
     * reduced read set of the paper; otherwise {@code k} whole units.
     */
    List<ReadRange> planRepair(long unitSize, int lost, int... unavailable);

    /**
     * The byte ranges {@link #decode(long, int[], UnitReader, UnitWriter)} will read to rebuild
     * {@code erased}: whole units (or whole substripes) of {@code k} survivors. Lets a caller fetch
     * them concurrently before decoding from memory.
     *
     * @throws TooManyErasuresException if more than {@code r} units are erased
     */
    List<ReadRange> planDecode(long unitSize, int... erased);

    /**
     * The byte ranges {@link #readRange} will read to rebuild bytes {@code [offset, offset + length)}
     * of {@code unit} when the units in {@code unavailable} cannot be read: the same range of
     * {@code k} other units when the code allows. Lets a caller fetch them concurrently.
     *
     * @throws TooManyErasuresException if the unit and the unavailable ones are more than {@code r}
     */
    List<ReadRange> planReadRange(long unitSize, int unit, long offset, int length, int... unavailable);

    /**
     * Rebuilds one unit with the fewest reads the code allows, reading exactly
     * {@link #planRepair} through {@code source} and writing the unit through {@code out}.
     *
     * @return the number of bytes read
     */
    long repair(long unitSize, int lost, int[] unavailable, UnitReader source, UnitWriter out) throws IOException;

    /**
     * A degraded read: fills {@code dst} with bytes {@code [offset, offset + dst.remaining())} of
     * {@code unit} without reading that unit (nor any in {@code unavailable}), by decoding only that
     * range from the same range of {@code k} other units: {@code k * len} bytes read when the code
     * allows, never whole units. Memory use is bounded by {@code k * min(len, chunkSize)}.
     *
     * @return the number of bytes read
     */
    long readRange(long unitSize, int unit, long offset, ByteBuffer dst, int[] unavailable, UnitReader source)
            throws IOException;

    /**
     * Frees the prepared matrices (native memory with the ISA-L backend). Idempotent; the codec may not
     * be used afterwards. Call it only once no other thread is using the codec.
     */
    @Override
    void close();
}
