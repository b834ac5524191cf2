package io.hayloft.s3.data;

import io.hayloft.client.Futures;
import io.hayloft.client.HayloftClient;
import io.hayloft.client.NamespaceClient;
import io.hayloft.client.PhotoNotFoundException;
import io.hayloft.client.PutResult;
import io.hayloft.format.s3.Chunk;
import io.hayloft.format.s3.ObjectRecord;
import io.hayloft.format.s3.Pending;
import io.hayloft.format.s3.Upload;
import io.hayloft.format.wire.PhotoId;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Objects' bytes as needles (docs/s3.md "How objects are stored"): writes a body as chunks of at most
 * {@code chunkBytes}, each named in a WRITING pending record before its needle is written; reads a
 * range of an object back from the chunks that cover it; frees the needles of DOOMED records; and the
 * orphan sweep. Thread-safe.
 *
 * <p>No needle is ever written that no record names: a chunk's id (volume, key, cookie, chosen by the
 * client) is appended to the body's WRITING record ({@link NamespaceClient#pend}) before the client
 * sends a byte of it ({@link HayloftClient#putAsync(byte[], java.util.function.Function)}). The
 * commit of the object or part removes the record in the same directory change; until then a crash
 * leaves the record behind, and the sweep dooms it once it is older than {@code orphanAfterMillis}
 * and deletes its needles. Needles are deleted through {@link HayloftClient#delete} (the volume's
 * delete log, then the replicas; a cold volume's reclaim), a needle already gone counting as deleted.
 */
public final class ChunkStore implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ChunkStore.class);
    /** Records asked of the directory per page while sweeping. */
    static final int PAGE = 100;
    /** First buffer of a body: small objects do not cost a whole chunk of memory. */
    private static final int FIRST_BUFFER = 64 * 1024;

    private final HayloftClient client;
    private final NamespaceClient namespace;
    private final int chunkBytes;
    private final ExecutorService freeing;

    public ChunkStore(HayloftClient client, NamespaceClient namespace, int chunkBytes) {
        if (chunkBytes < 1) {
            throw new IllegalArgumentException("chunkBytes must be >= 1, was " + chunkBytes);
        }
        this.client = Objects.requireNonNull(client, "client");
        this.namespace = Objects.requireNonNull(namespace, "namespace");
        this.chunkBytes = chunkBytes;
        AtomicInteger n = new AtomicInteger();
        ThreadPoolExecutor pool = new ThreadPoolExecutor(2, 2, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), r -> {
            Thread t = new Thread(r, "s3-free-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        pool.allowCoreThreadTimeOut(true);
        this.freeing = pool;
    }

    public int chunkBytes() {
        return chunkBytes;
    }

    /** Starts writing one body (a PUT's object or an UploadPart's part), always as chunks. */
    public Writer writer() {
        return new ChunkWriter(0);
    }

    /**
     * Starts writing one body that is kept inline when it ends at most {@code inlineBytes} long (at most
     * one chunk): nothing is written to the stores, and {@link Writer#inline()} gives its bytes for the
     * object's record (docs/s3.md "Small objects inline"). A longer body is written as chunks.
     */
    public Writer writer(int inlineBytes) {
        if (inlineBytes < 0 || inlineBytes > chunkBytes) {
            throw new IllegalArgumentException("inlineBytes must be in 0.." + chunkBytes + ", was " + inlineBytes);
        }
        return new ChunkWriter(inlineBytes);
    }

    /**
     * The bytes {@code [offset, offset + length)} of the data made of {@code chunks}, read from the
     * chunks that cover them (the next chunk fetched while the current one is read). The stream's
     * read throws an IOException if a chunk cannot be read.
     */
    public InputStream read(List<Chunk> chunks, long offset, long length) {
        return new ChunkInputStream(client, chunks, offset, length);
    }

    /** The bytes {@code [offset, offset + length)} of object {@code o}: from its inline data, or from its chunks. */
    public InputStream read(ObjectRecord o, long offset, long length) {
        if (o.inline() != null) {
            Objects.checkFromIndexSize(offset, length, o.inline().length);
            return new ByteArrayInputStream(o.inline(), (int) offset, (int) length);
        }
        return read(o.chunks(), offset, length);
    }

    /**
     * Deletes the needles named in DOOMED record {@code doomed} (null: nothing), then the record; in the
     * background, failures left to the sweep.
     */
    public void free(String doomed) {
        if (doomed == null) {
            return;
        }
        submit(() -> {
            Pending p = record(doomed);
            if (p == null) {
                return; // dropped already (by a sweep, or another gateway)
            }
            if (!Pending.DOOMED.equals(p.state())) {
                LOG.warn("pending record {} is {}, not DOOMED: not freed", doomed, p.state());
                return;
            }
            freeNow(p);
        });
    }

    /**
     * The orphan sweep, once: dooms WRITING records older than {@code orphanAfterMillis}, aborts
     * multipart uploads older than {@code abandonedUploadMillis}, and frees every DOOMED record.
     * Returns the needles deleted.
     */
    public long sweep(long orphanAfterMillis, long abandonedUploadMillis) {
        long now = System.currentTimeMillis();
        int doomed = 0;
        String after = null;
        for (List<Pending> page; !(page = Futures.await(namespace.pendings(after, PAGE))).isEmpty(); ) {
            for (Pending p : page) {
                if (Pending.WRITING.equals(p.state()) && p.created() < now - orphanAfterMillis) {
                    try {
                        Futures.await(namespace.doom(p.id()));
                        doomed++;
                    } catch (RuntimeException e) {
                        LOG.warn("sweep: cannot doom pending record {}: {}", p.id(), e.toString());
                    }
                }
            }
            after = page.get(page.size() - 1).id();
        }
        int aborted = abortAbandoned(now - abandonedUploadMillis);
        long deleted = 0;
        int freed = 0;
        after = null;
        for (List<Pending> page; !(page = Futures.await(namespace.pendings(after, PAGE))).isEmpty(); ) {
            for (Pending p : page) {
                if (Pending.DOOMED.equals(p.state())) {
                    deleted += freeNow(p);
                    freed++;
                }
            }
            after = page.get(page.size() - 1).id();
        }
        if (doomed + aborted + freed > 0) {
            LOG.info("sweep: doomed {} orphaned pending records, aborted {} abandoned uploads, freed {} records ({} needles deleted)",
                    doomed, aborted, freed, deleted);
        }
        return deleted;
    }

    /** Aborts every multipart upload initiated before {@code before}; their parts' chunks go to DOOMED records. */
    private int abortAbandoned(long before) {
        Set<String> seen = new HashSet<>();
        int aborted = 0;
        while (true) {
            List<Upload> page = Futures.await(namespace.uploadsBefore(before, PAGE));
            boolean fresh = false;
            for (Upload u : page) {
                if (!seen.add(u.uploadId())) {
                    continue; // one whose abort failed: not tried again in this sweep
                }
                fresh = true;
                try {
                    Futures.await(namespace.abort(u.bucket(), u.key(), u.uploadId()));
                    aborted++;
                } catch (RuntimeException e) {
                    LOG.warn("sweep: cannot abort upload {} of {}/{}: {}", u.uploadId(), u.bucket(), u.key(), e.toString());
                }
            }
            if (!fresh) {
                return aborted;
            }
        }
    }

    /**
     * Deletes the needles of DOOMED record {@code p}, then the record when every delete succeeded.
     * Returns the needles deleted (those already gone not counted).
     */
    private long freeNow(Pending p) {
        long deleted = 0;
        boolean all = true;
        for (Chunk c : p.chunks()) {
            switch (delete(c.photo())) {
                case DELETED -> deleted++;
                case GONE -> {
                }
                case FAILED -> all = false;
            }
        }
        if (all) {
            try {
                Futures.await(namespace.drop(p.id()));
            } catch (RuntimeException e) {
                LOG.warn("cannot drop pending record {} (its needles are deleted): {}", p.id(), e.toString());
            }
        } else {
            LOG.warn("pending record {}: some needles could not be deleted; left to the sweep", p.id());
        }
        return deleted;
    }

    private enum Deleted { DELETED, GONE, FAILED }

    private Deleted delete(PhotoId photo) {
        try {
            client.delete(photo);
            return Deleted.DELETED;
        } catch (PhotoNotFoundException e) {
            return Deleted.GONE;
        } catch (RuntimeException e) {
            LOG.warn("cannot delete needle {}: {}", photo, e.toString());
            return Deleted.FAILED;
        }
    }

    /** Pending record {@code id}, or null when there is none. */
    private Pending record(String id) {
        return Futures.await(namespace.pending(id));
    }

    private void submit(Runnable task) {
        try {
            freeing.execute(() -> {
                try {
                    task.run();
                } catch (RuntimeException e) {
                    LOG.warn("freeing needles failed (left to the sweep): {}", e.toString());
                }
            });
        } catch (java.util.concurrent.RejectedExecutionException e) {
            LOG.warn("chunk store closed: needles left to the sweep");
        }
    }

    /** Stops the background frees, waiting up to 10 s for those under way (what is left, the sweep does). */
    @Override
    public void close() {
        freeing.shutdown();
        try {
            if (!freeing.awaitTermination(10, TimeUnit.SECONDS)) {
                LOG.warn("background frees still running at close; left to the sweep");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * One body being written: bytes are buffered up to a chunk, then the chunk is named in the pending
     * record and written as a needle (on the calling thread). Not thread-safe: one writer per body.
     */
    public interface Writer {
        void write(byte[] b, int off, int len);

        /** Writes the last (partial) chunk, unless the body is kept inline; returns every chunk in order (none when inline). */
        List<Chunk> finish();

        /** After {@link #finish}: the body's bytes when it is kept inline, else null. */
        byte[] inline();

        /** The WRITING pending record naming this body's chunks (null while no chunk was written). */
        String pending();

        /** Bytes written so far. */
        long size();

        /** The body will not be committed: its pending record is doomed and its needles freed. Never throws. */
        void abort();
    }

    /** The writer: a growing buffer up to one chunk; each full chunk pended, then put. Not thread-safe. */
    private final class ChunkWriter implements Writer {
        private final int inlineBytes;
        private byte[] buf = new byte[0];
        private int count;
        private long size;
        private volatile String pending; // set by the announcement, on a client thread
        private final List<Chunk> chunks = new ArrayList<>();
        private byte[] inline;
        private boolean done;

        ChunkWriter(int inlineBytes) {
            this.inlineBytes = inlineBytes;
        }

        @Override
        public void write(byte[] b, int off, int len) {
            Objects.checkFromIndexSize(off, len, b.length);
            if (done) {
                throw new IllegalStateException("the body was finished or aborted");
            }
            while (len > 0) {
                if (count == buf.length) {
                    buf = Arrays.copyOf(buf, (int) Math.min(chunkBytes, Math.max(FIRST_BUFFER, 2L * buf.length)));
                }
                int n = Math.min(len, buf.length - count);
                System.arraycopy(b, off, buf, count, n);
                count += n;
                off += n;
                len -= n;
                size += n;
                if (count == chunkBytes) {
                    flushChunk();
                }
            }
        }

        /** Names the buffered chunk in the pending record, then writes it; returns once every replica has it. */
        private void flushChunk() {
            byte[] data = count == buf.length ? buf : Arrays.copyOf(buf, count);
            long n = count;
            buf = count == chunkBytes ? new byte[0] : buf;
            count = 0;
            PutResult r = Futures.await(client.putAsync(data,
                    id -> namespace.pend(pending, List.of(Chunk.of(id, n))).thenAccept(record -> pending = record)));
            chunks.add(Chunk.of(r.id(), n));
        }

        @Override
        public List<Chunk> finish() {
            if (done) {
                throw new IllegalStateException("the body was finished or aborted");
            }
            if (count > 0 && chunks.isEmpty() && count <= inlineBytes) {
                inline = Arrays.copyOf(buf, count);
            } else if (count > 0) {
                flushChunk();
            }
            buf = null;
            done = true;
            return List.copyOf(chunks);
        }

        @Override
        public byte[] inline() {
            return inline;
        }

        @Override
        public String pending() {
            return pending;
        }

        @Override
        public long size() {
            return size;
        }

        /**
         * Dooms the record, then frees it (in the background): its needles deleted, then the record
         * dropped. A record that is gone is left alone: it was committed (a commit whose answer was
         * lost still took it) or already freed. A doom that fails leaves the record WRITING, for the sweep.
         */
        @Override
        public void abort() {
            done = true;
            buf = null;
            String id = pending;
            if (id == null) {
                return; // nothing was named, so nothing was written
            }
            submit(() -> {
                try {
                    Futures.await(namespace.doom(id));
                } catch (RuntimeException e) {
                    LOG.warn("cannot doom pending record {} (left to the sweep): {}", id, e.toString());
                    return;
                }
                Pending p = record(id);
                if (p != null && Pending.DOOMED.equals(p.state())) {
                    freeNow(p);
                }
            });
        }
    }
}
