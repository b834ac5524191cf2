package io.hayloft.cold;

import io.hayloft.erasure.ReadRange;
import io.hayloft.erasure.UnitReader;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.function.Function;
import java.util.function.LongConsumer;

/**
 * One round of concurrent source reads for a codec: every range the codec's plan names
 * ({@link io.hayloft.erasure.ErasureCodec#planRepair}, {@code planDecode}, {@code planReadRange}) is
 * fetched at once, each from its own store, and the codec is then served from memory through
 * {@link #reader()}. The round holds exactly the planned bytes (for a degraded read, {@code k ×}
 * the range; for a repair window, at most {@code k ×} the window per unit).
 *
 * <p>Ranges may be given in a window's own coordinates: {@code toReal} maps a codec offset to the
 * offset in the stored block (identity for whole units), {@code pieceLength} says how far that
 * mapping stays contiguous, so a planned range is split where the mapping jumps.
 *
 * <p>Thread-safe: fetches complete on other threads; {@link #await()} publishes their results to
 * the caller, which alone then uses {@link #reader()}.
 */
public final class RangeFetch {

    /** Units whose reads failed; the caller adds them to the unavailable set and retries. */
    public static final class SourcesFailed extends IOException {
        public final Set<Integer> units;

        SourcesFailed(Set<Integer> units, Throwable first) {
            super("units " + units + " could not be read: " + (first == null ? "" : first.getMessage()), first);
            this.units = units;
        }
    }

    /** Maps the codec's offsets in a unit to stored-block offsets; contiguous within each piece. */
    public interface OffsetMap {
        OffsetMap IDENTITY = new OffsetMap() {
            @Override
            public long toReal(long offset) {
                return offset;
            }

            @Override
            public long pieceEnd(long offset) {
                return Long.MAX_VALUE;
            }
        };

        /**
         * A window of a unit split in pieces of {@code piece} bytes: codec offsets {@code [0, n × length)}
         * are bytes {@code [from, from + length)} of each of the n pieces.
         */
        static OffsetMap window(long piece, long from, long length) {
            return new OffsetMap() {
                @Override
                public long toReal(long offset) {
                    return (offset / length) * piece + from + offset % length;
                }

                @Override
                public long pieceEnd(long offset) {
                    return (offset / length + 1) * length;
                }
            };
        }

        long toReal(long offset);

        /** The end (exclusive, codec coordinates) of the contiguous piece holding {@code offset}. */
        long pieceEnd(long offset);
    }

    private record Part(int unit, long offset, int length, CompletableFuture<byte[]> data) {
    }

    private final List<Part> parts = new ArrayList<>();
    private final OffsetMap map;

    /**
     * Starts every fetch now.
     *
     * @param fetch starts reading one range (unit, stored-block offset, length); bytes fetched are
     *              reported to {@code counted} as each read completes
     */
    public RangeFetch(List<ReadRange> plan, OffsetMap map, Function<ReadRange, CompletableFuture<byte[]>> fetch, LongConsumer counted) {
        this.map = map;
        for (ReadRange r : plan) {
            long off = r.offset();
            long end = r.offset() + r.length();
            while (off < end) {
                int n = (int) (Math.min(end, map.pieceEnd(off)) - off);
                if (n <= 0) {
                    throw new IllegalStateException("empty piece at offset " + off + " of unit " + r.unit());
                }
                ReadRange real = new ReadRange(r.unit(), map.toReal(off), n);
                CompletableFuture<byte[]> f = fetch.apply(real).thenApply(b -> {
                    if (b.length != real.length()) {
                        throw new CompletionException(new IOException("unit " + real.unit() + " answered " + b.length
                                + " bytes for a range of " + real.length()));
                    }
                    counted.accept(b.length);
                    return b;
                });
                parts.add(new Part(r.unit(), off, n, f));
                off += n;
            }
        }
    }

    /** Waits for every fetch (each has its own deadline); throws naming every unit that failed. */
    public void await() throws SourcesFailed, InterruptedException {
        Set<Integer> failed = new TreeSet<>();
        Throwable first = null;
        for (Part p : parts) {
            try {
                p.data().get();
            } catch (ExecutionException e) {
                failed.add(p.unit());
                first = first == null ? e.getCause() : first;
            }
        }
        if (!failed.isEmpty()) {
            throw new SourcesFailed(failed, first);
        }
    }

    /** Abandons the round: reads still running are cancelled (their bytes are no longer wanted). */
    public void cancel() {
        for (Part p : parts) {
            p.data().cancel(false);
        }
    }

    /** Serves the codec from the fetched bytes; a read outside the plan is a bug and says so. */
    public UnitReader reader() {
        return (unit, offset, dst) -> {
            while (dst.hasRemaining()) {
                long at = offset;
                Part part = parts.stream().filter(p -> p.unit() == unit && p.offset() <= at && at < p.offset() + p.length())
                        .findFirst().orElseThrow(() -> new IllegalStateException("the codec read unit " + unit
                                + " at " + at + ", which its plan did not name"));
                int from = (int) (at - part.offset());
                int n = Math.min(dst.remaining(), part.length() - from);
                dst.put(part.data().join(), from, n);
                offset += n;
            }
        };
    }

    /** Bytes held by this round once fetched. */
    public long bytes() {
        return parts.stream().mapToLong(Part::length).sum();
    }
}
