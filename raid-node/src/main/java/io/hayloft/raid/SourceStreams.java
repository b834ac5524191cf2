package io.hayloft.raid;

import io.hayloft.cold.RangeFetch;
import io.hayloft.erasure.ReadRange;
import java.io.IOException;
import java.io.InputStream;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.function.Function;

/**
 * The source reads of one repair attempt as streams: one streamed {@code GET /blocks/<name>} per
 * (source unit, substripe piece) over the whole range the repair reads there, consumed one window at
 * a time, each window's bytes handed to the decoder through {@link RangeFetch} (which counts them as
 * before: a Hitchhiker repair still reads 0.65 × RS). A repair of a 256 MiB block at 1 MiB windows
 * sends {@code k × substripes} requests instead of 256 times as many, and still holds at most two
 * windows of each source.
 *
 * <p>Usable only when, over every window, the ranges the codec plans for each (unit, piece) follow
 * one another ({@link #plan}); otherwise the repair reads each window's ranges with ranged GETs.
 *
 * <p>Reads of one stream run one after another on {@link #READERS} (a window's read starts when the
 * previous window's read of that stream ended), so the window being decoded and the next one are in
 * flight at most. Each window read is paced by the repair's {@link Throttle} on the source's egress
 * and the repairer's ingress (none when the repairer holds the block). A read that fails (the store
 * died, a short body, a read past the transport's timeout) fails its window's future with an
 * IOException, and {@link RangeFetch#await} names the unit, so the repair retries without it.
 *
 * <p>Thread-safe: each stream's state is touched only by its chained reads; {@link #close} may run
 * on any thread and aborts every stream still open.
 */
final class SourceStreams implements AutoCloseable {

    /** Blocking stream reads, one task per window per stream at a time; daemon threads, idle ones expire. */
    private static final ExecutorService READERS = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "hayloft-repair-stream");
        t.setDaemon(true);
        return t;
    });

    /** Where one stream starts and ends in its block. */
    record Span(int unit, long start, long end) {
    }

    /** Opens a stream: the block's store and name from the stripe map, bytes {@code [start, end)}. */
    @FunctionalInterface
    interface Opener {
        InputStream open(int unit, long start, long length) throws IOException;
    }

    /** Paces one window's read; returns the nanoTime to wait for, or 0. A failed read gives the reservation back. */
    interface Pacer {
        long reserve(int unit, long bytes);

        void release(int unit, long bytes);
    }

    private final class Stream {
        final Span span;
        volatile InputStream in;
        long pos;
        CompletableFuture<?> tail = CompletableFuture.completedFuture(null);
        volatile boolean closed;

        Stream(Span span) {
            this.span = span;
            this.pos = span.start();
        }

        byte[] read(long at, int n) throws IOException {
            if (closed) {
                throw new IOException("stream of unit " + span.unit() + " closed");
            }
            if (at != pos) {
                throw new IllegalStateException("unit " + span.unit() + " read at " + at + ", its stream is at " + pos);
            }
            if (in == null) {
                in = opener.open(span.unit(), span.start(), span.end() - span.start());
                if (closed) { // closed while it opened: abort it here, close() saw no stream
                    close();
                    throw new IOException("stream of unit " + span.unit() + " closed");
                }
            }
            byte[] b = new byte[n];
            int got = in.readNBytes(b, 0, n);
            if (got != n) {
                throw new IOException("stream of unit " + span.unit() + " ended at " + (pos + got) + ", before "
                        + span.end());
            }
            pos += n;
            if (pos == span.end()) { // read to its end: closing it returns the connection to the pool
                close();
            }
            return b;
        }

        void close() {
            closed = true;
            InputStream s = in;
            if (s != null) {
                try {
                    s.close();
                } catch (IOException | RuntimeException e) {
                    // aborted anyway
                }
            }
        }
    }

    private final long piece;
    private final int substripes;
    private final Opener opener;
    private final Pacer pacer;
    private final Map<Long, Stream> streams = new HashMap<>();

    private SourceStreams(long piece, int substripes, Map<Long, Span> spans, Opener opener, Pacer pacer) {
        this.piece = piece;
        this.substripes = substripes;
        this.opener = opener;
        this.pacer = pacer;
        spans.forEach((k, s) -> streams.put(k, new Stream(s)));
    }

    /**
     * The streams a repair needs, or null when some (unit, piece)'s planned ranges are not contiguous
     * from one window to the next.
     *
     * @param windows the plan of each window, in order, with its offset map (as {@link RangeFetch} splits them)
     */
    static SourceStreams plan(long piece, int substripes, List<Map.Entry<List<ReadRange>, RangeFetch.OffsetMap>> windows,
                              Opener opener, Pacer pacer) {
        Map<Long, Span> spans = new HashMap<>();
        for (Map.Entry<List<ReadRange>, RangeFetch.OffsetMap> w : windows) {
            RangeFetch.OffsetMap map = w.getValue();
            for (ReadRange r : w.getKey()) {
                long off = r.offset();
                long end = r.offset() + r.length();
                while (off < end) {
                    long n = Math.min(end, map.pieceEnd(off)) - off;
                    long real = map.toReal(off);
                    long key = key(r.unit(), real / piece, substripes);
                    Span s = spans.get(key);
                    if (s == null) {
                        spans.put(key, new Span(r.unit(), real, real + n));
                    } else if (s.end() == real) {
                        spans.put(key, new Span(r.unit(), s.start(), real + n));
                    } else {
                        return null;
                    }
                    off += n;
                }
            }
        }
        return new SourceStreams(piece, substripes, spans, opener, pacer);
    }

    private static long key(int unit, long p, int substripes) {
        return (long) unit * substripes + p;
    }

    /** The spans this repair streams (for tests and logs). */
    List<Span> spans() {
        return streams.values().stream().map(s -> s.span).toList();
    }

    /** The read of one planned range (block coordinates), chained after the previous read of its stream. */
    Function<ReadRange, CompletableFuture<byte[]>> fetcher() {
        return r -> {
            Stream s = streams.get(key(r.unit(), r.offset() / piece, substripes));
            if (s == null) {
                return CompletableFuture.failedFuture(new IllegalStateException("unit " + r.unit() + " at " + r.offset()
                        + " is in no planned stream"));
            }
            CompletableFuture<byte[]> f;
            synchronized (s) {
                f = s.tail.handleAsync((x, prior) -> {
                    if (prior != null) { // an earlier window of this stream failed: so does this one
                        throw prior instanceof CompletionException c ? c : new CompletionException(prior);
                    }
                    long until = pacer.reserve(r.unit(), r.length());
                    try {
                        Throttle.pace(until);
                        return s.read(r.offset(), (int) r.length());
                    } catch (IOException | RuntimeException e) {
                        pacer.release(r.unit(), r.length());
                        s.close();
                        throw new CompletionException(e instanceof IOException ? e : new IOException(e.toString(), e));
                    }
                }, READERS);
                s.tail = f;
            }
            return f;
        };
    }

    /** Aborts every stream (those read to their end are closed already by their store's answer). */
    @Override
    public void close() {
        for (Stream s : streams.values()) {
            s.close();
        }
    }
}
